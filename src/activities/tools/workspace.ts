/**
 * Where one tool call may act, checked on the worker before anything runs: its workspace
 * root must lie, canonically (symlinks and `..` resolved), under a root this worker serves
 * (FORKFLOW_WORKSPACE_ROOTS, else its own workspace), outside the worker's protected state,
 * and — for a sub-agent started with the Agent tool's `cwd` — inside the workspace of the
 * agent that started it (the workflow checked the path lexically; only here can symlinks be
 * seen). The fork's view (sandbox/view.ts) follows from it; paths its caller allowed count
 * only inside those roots too.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { canonicalish, viewFor, within, type FsView } from './sandbox/view';
import { worktreeGitAccess } from './worktree-access';

/** What the tool call says about where it acts. */
export interface WorkspaceRequest {
  /** The fork's workspace root (or worktree); absent: the worker's own. */
  root?: string;
  /** Paths the fork's caller allowed it to read. */
  readPaths?: readonly string[];
  /** The workspace of the agent that started this one with a `cwd` (its root must lie inside; relative: under the worker's own root). */
  confinedTo?: string;
  /** A worktree fork's repository: what of its git directory the fork's commits need is writable too (worktree-access.ts). */
  worktreeRepo?: string;
  /** A memory agent's pinned memory directory: readable wherever it lies (it is the agent's write scope). */
  memoryDir?: string;
}

/** What the worker allows. */
export interface WorkspacePolicy {
  /** The worker's own workspace root. */
  defaultRoot: string;
  /** Roots workspaces must lie under. */
  roots: readonly string[];
  /** Protected paths (canonical). */
  protectedPaths: readonly string[];
}

/**
 * The checked workspace: canonical root, the fork's view, further writable directories, and
 * paths inside those that stay read-only.
 */
export type ResolvedWorkspace = { ok: true; root: string; view: FsView; writableExtra: string[]; readOnlyExtra: string[] } | { ok: false; message: string };

async function canonicalDir(p: string): Promise<string | undefined> {
  try {
    const c = await realpath(p);
    return (await stat(c)).isDirectory() ? c : undefined;
  } catch {
    return undefined;
  }
}

/** Checks `req` against `policy`; refusals name the rule and what to do. */
export async function resolveWorkspace(req: WorkspaceRequest, policy: WorkspacePolicy): Promise<ResolvedWorkspace> {
  // A relative root (a sub-agent's cwd under a caller in the worker's own root) lies in that root.
  const given = path.resolve(policy.defaultRoot, req.root ?? policy.defaultRoot);
  const root = await canonicalDir(given);
  if (!root) return { ok: false, message: `The workspace root ${given} is not a directory on this worker.` };
  const roots = policy.roots.map(canonicalish);
  if (!roots.some((r) => within(root, r))) {
    return { ok: false, message: `The workspace root ${given} (${root}) is outside the roots this worker serves (${roots.join(', ')}); start the fork with a workspace.root under one of them, or add its root to the worker's FORKFLOW_WORKSPACE_ROOTS.` };
  }
  if (policy.protectedPaths.some((h) => within(root, h))) {
    return { ok: false, message: `The workspace root ${given} lies in the worker's protected state; no tool acts there.` };
  }
  if (req.confinedTo !== undefined) {
    const parent = await canonicalDir(path.resolve(policy.defaultRoot, req.confinedTo));
    if (!parent || !within(root, parent)) {
      return { ok: false, message: `Refused: an Agent's cwd must resolve inside the workspace of the agent that started it (${req.confinedTo}), and ${given} resolves to ${root}.` };
    }
  }
  // A caller may widen a fork's view only within what this worker serves: never into another tenant's roots.
  const readPaths = (req.readPaths ?? []).filter((p) => path.isAbsolute(p)).map(canonicalish).filter((p) => roots.some((r) => within(p, r)));
  if (req.memoryDir !== undefined && path.isAbsolute(req.memoryDir)) readPaths.push(canonicalish(req.memoryDir));
  const writableExtra: string[] = [];
  const readOnlyExtra: string[] = [];
  if (req.worktreeRepo !== undefined) {
    const gitDir = await canonicalDir(path.join(req.worktreeRepo, '.git'));
    const access = gitDir && roots.some((r) => within(gitDir, r)) ? worktreeGitAccess(root, gitDir) : undefined;
    if (access) {
      // The repository's git directory is read (git needs its refs, objects, config); only the worktree's own parts are written.
      readPaths.push(access.common);
      writableExtra.push(...access.writable);
      readOnlyExtra.push(...access.readOnly);
    }
  }
  return { ok: true, root, view: viewFor(root, readPaths, policy.protectedPaths), writableExtra, readOnlyExtra };
}
