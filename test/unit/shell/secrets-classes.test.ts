/**
 * Where no sandbox can start (an explicit opt-out), the classifier is the only wall, and it
 * must not class as read-only a command that reads the worker's own secrets: a process's
 * environment (`/proc/$PPID/environ`, `ps eww`) and the rest of /proc, however named —
 * while machine facts and ordinary `ps` still pass.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

async function allowed(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

const REFUSED = [
  'cat /proc/$PPID/environ',
  'cat /proc/1/environ',
  "tr '\\0' '\\n' < /proc/$PPID/environ",
  'strings /proc/*/environ',
  'cat /proc/self/../1/environ',
  'cat "/proc/$PPID/"environ',
  'grep -a KEY /proc/$PPID/environ',
  'grep -r ANTHROPIC /proc',
  'cat /proc/$PPID/cmdline',
  'ls -l /proc/$PPID/fd',
  'cat ../../../../proc/1/status',
  'cat /p?oc/1/env*',
  'ls /*/1/',
  'cd /proc/1 && cat environ',
  'ps eww',
  'ps auxe',
  'ps e -p 1',
  'ps -p 1 ewww',
  'xargs -0 ps e < /dev/null',
];

const ALLOWED = ['ps aux', 'ps -ef', 'ps -o pid,comm', 'cat /proc/cpuinfo', 'cat /proc/meminfo', 'ls /proc/self/fd', 'readlink /proc/$$/exe', 'grep -rn environment src', 'cat src/processing.ts'];

describe('secrets of the worker, sandbox off', () => {
  it.each(REFUSED)('refuses %s', async (command) => {
    expect(await allowed(command)).toBe(false);
  });

  it.each(ALLOWED)('allows %s', async (command) => {
    expect(await allowed(command)).toBe(true);
  });
});
