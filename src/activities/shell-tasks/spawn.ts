/**
 * Starting a background shell task: the same walls as a foreground Bash call (the plan of
 * tools/bash.ts: OS sandbox, limits, cgroup; outside the sandbox the classifier and the git
 * guard), but the command is left running on its own. A small supervising shell, outside the
 * sandbox and in a session of its own, runs it with its output appended to the task's file and
 * records its exit code when it ends. Neither depends on the worker: a worker that restarts
 * finds the task again by its files (watch.ts), and bubblewrap's `--die-with-parent` ties the
 * command to its supervisor, so stopping the supervisor's group stops everything.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { StartShellTaskResult } from '../../shared/tools/shell-tasks';
import { argvFor, authorizeShell, plan, type RunnablePlan } from '../tools/bash';
import { gitProgramsRefusal } from '../tools/git-guard';
import { callCgroup, SANDBOX_HOME, type CallCgroup } from '../tools/sandbox';
import { shellEnvironment } from '../tools/shell-env';
import type { ToolContext } from '../tools/types';
import { viewOf } from '../tools/visible';
import { type TaskFiles, writeMeta } from './files';

/**
 * The supervisor: runs the command (its argv in "$@"), then writes its exit code to the file
 * named by $0, atomically. Killed itself (TaskStop, timeout), it writes nothing.
 */
const SUPERVISE = '"$@"; code=$?; echo "$code" > "$0.tmp" && mv "$0.tmp" "$0"';

/** Why a task cannot start, or the runnable plan. */
async function planFor(command: string, ctx: ToolContext): Promise<{ refused: string } | { plan: RunnablePlan }> {
  const view = viewOf(ctx);
  const planned = plan(ctx, view);
  if (planned.kind === 'refuse') return { refused: planned.message };
  if (planned.kind === 'plain') {
    const denial = (await authorizeShell(command, ctx)) ?? (planned.writes ? null : await gitProgramsRefusal(command, view.root));
    if (denial !== null) return { refused: denial };
  }
  // A fork that allows named hosts reaches them through a proxy of the worker's own, per call:
  // it would not outlive a worker restart, so such tasks are not started.
  if (planned.kind === 'sandbox' && planned.network) {
    return { refused: 'Background Bash is not available to an agent whose sandbox allows network hosts (their proxy lives in the worker and would not outlive it). Run the command in the foreground.' };
  }
  return { plan: planned };
}

/**
 * Starts `command` for the task whose files are `files`. Resolves once the supervisor runs
 * (or could not start); never waits for the command.
 */
export async function spawnTask(command: string, ctx: ToolContext, files: TaskFiles, timeoutMs: number): Promise<StartShellTaskResult> {
  const planned = await planFor(command, ctx);
  if ('refused' in planned) return { ok: false, content: planned.refused };
  const p = planned.plan;
  const cgroup: CallCgroup | undefined = p.kind === 'sandbox' && p.cap.kind === 'cgroup' ? callCgroup(p.cap, p.limits) : undefined;
  const env = shellEnvironment(process.env, {
    readOnly: ctx.writePolicy.kind !== 'workspace',
    ...(p.kind === 'sandbox' ? { sandboxHome: SANDBOX_HOME } : {}),
    ...(p.kind === 'sandbox' && p.setpriv ? { foreignOwner: true } : {}),
  });
  const out = openSync(files.log, 'a', 0o600);
  try {
    const argv = argvFor(command, p, cgroup, undefined);
    const child = spawn('/bin/sh', ['-c', SUPERVISE, files.exit, ...argv], { cwd: ctx.root, detached: true, stdio: ['ignore', out, out], env });
    const started = await new Promise<{ pid: number } | { error: Error }>((resolve) => {
      child.once('spawn', () => resolve({ pid: child.pid! }));
      child.once('error', (error) => resolve({ error }));
    });
    if ('error' in started) {
      cgroup?.release();
      return { ok: false, content: `Could not start bash in ${ctx.root}: ${started.error.message}.` };
    }
    // The worker does not wait for it: it is found again by its files.
    child.unref();
    const now = Date.now();
    const containment = p.kind === 'sandbox' ? 'sandbox' : p.containment;
    writeMeta(files, { v: 1, pgid: started.pid, startedAt: now, deadline: now + timeoutMs, outputLimit: p.limits.outputBytes, containment, ...(cgroup ? { cgroupProcs: cgroup.procs } : {}) });
    return { ok: true, outputFile: files.log, containment };
  } finally {
    closeSync(out);
  }
}
