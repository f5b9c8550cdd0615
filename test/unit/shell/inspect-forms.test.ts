/**
 * Commands read-only in some forms only (programs/inspect.ts): each allowed form passes,
 * and the writing, executing or library-loading forms next to it are denied.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

const allowed = [
  'git add --dry-run src',
  'git add -n -A',
  'git apply --check patch.diff',
  'git diff HEAD~1 | git apply --stat',
  'git apply --numstat -p1 <(git diff HEAD~2)',
  'git fsck --no-dangling',
  'getent passwd root',
  'getent -i hosts localhost',
  'man -w git',
  'man -k grep',
  "let 'y = 6 * 7'",
  'let x=1',
];
const denied = [
  'git add src',
  'git add -n --chmod=+x run.sh',
  'git add -n -N new.txt',
  'git add -n $(cat list)',
  'git apply patch.diff',
  'git apply --check --apply patch.diff',
  'git apply --stat --build-fake-ancestor=out patch.diff',
  'git apply --check --3way patch.diff',
  'git fsck --lost-found',
  'getent -s files passwd',
  'getent --service=../../tmp/x passwd',
  'man git',
  'man -P cat git',
  'man -w -P cat git',
  'let x=y',
  "let 'a[$(touch p)]=1'",
  'let PATH=1',
  "let 'x = y + 1'",
];

describe('read-only forms of git add/apply/fsck, getent, man and let', () => {
  it.each(allowed)('allows %s', async (cmd) => {
    expect(await classifyShellCommand(cmd)).toEqual({ readOnly: true });
  });
  it.each(denied)('denies %s', async (cmd) => {
    expect(await classifyShellCommand(cmd)).toMatchObject({ readOnly: false });
  });
});
