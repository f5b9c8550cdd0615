/**
 * What a fork can see of the worker's filesystem — one definition for both walls: the
 * bubblewrap mounts of a Bash call (bwrap-args.ts) and the path checks of Read, Glob and
 * Grep (../visible.ts). A fork sees
 * - its workspace (or worktree),
 * - the system's programs and libraries (`/usr` and its usual aliases, the Node install
 *   that runs the worker, and an allow-list of harmless `/etc` entries),
 * - paths its caller allowed (`sandbox.readPaths`),
 * and nothing else: no home directory, no other workspace, no `/proc` of other processes,
 * no `/etc/shadow`, `/etc/ssh` or `/etc/ssl/private`. Paths the worker protects (its
 * stores, key files, the dev server's database, `.forkflow/`) stay hidden even inside
 * the workspace or an allowed path, whatever the policy.
 *
 * Every path here is canonical (symlinks resolved): callers compare canonical paths only.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { envSetting } from '../../../shared/wire/env-settings';

/** Top-level system directories (or usr-merge symlinks to them) a sandbox binds read-only. */
export const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'] as const;

/**
 * `/etc` entries programs commonly need and that hold no secrets: the loader cache, user and
 * group names (never `shadow`), name service and locale settings, certificates (never
 * `ssl/private`), terminfo, interpreter settings. Anything not listed is absent.
 */
export const ETC_ENTRIES = [
  'alternatives', 'bash.bashrc', 'ca-certificates', 'ca-certificates.conf', 'debian_version', 'environment',
  'gai.conf', 'group', 'host.conf', 'hostname', 'hosts', 'inputrc', 'issue', 'ld.so.cache', 'ld.so.conf',
  'ld.so.conf.d', 'locale.alias', 'locale.conf', 'localtime', 'lsb-release', 'magic', 'magic.mime',
  'mime.types', 'nsswitch.conf', 'os-release', 'passwd', 'perl', 'profile', 'protocols', 'python3', 'resolv.conf',
  'rpc', 'services', 'shells', 'ssl/certs', 'ssl/openssl.cnf', 'terminfo', 'timezone', 'vim', 'xattr.conf',
] as const;

/** Further `/etc` entries by name: a JDK's configuration, a Python's. */
const ETC_PATTERNS = [/^java-\d+-openjdk$/, /^python3\.\d+$/];

/** One system path as the sandbox mounts it. */
export type SystemEntry = { path: string; kind: 'bind'; source: string } | { path: string; kind: 'symlink'; target: string };

/** What one fork may see; every path canonical. */
export interface FsView {
  /** The workspace root (or worktree). */
  root: string;
  /** Further read-only paths its caller allowed. */
  readPaths: readonly string[];
  /** The worker's protected paths (its stores, keys, databases): never visible, whatever else is allowed. */
  protected: readonly string[];
  /**
   * `.forkflow/` at the top of the workspace and of each allowed path: hidden inside them,
   * unless the caller allowed a path inside one explicitly (a dream fork's staged transcripts).
   */
  hidden: readonly string[];
}

/** True when `child` is `dir` or lies below it (canonical strings, compared exactly). */
export function within(child: string, dir: string): boolean {
  if (child === dir || dir === '/') return true;
  return child.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/** The canonical form of `p`, or of its deepest existing ancestor with the rest appended. */
export function canonicalish(p: string): string {
  const missing: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(realpathSync(current), ...missing);
    } catch {
      if (current === path.dirname(current)) return path.join(current, ...missing);
      missing.unshift(path.basename(current));
      current = path.dirname(current);
    }
  }
}

function entryOf(p: string): SystemEntry | undefined {
  let st;
  try {
    st = lstatSync(p);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) {
    const target = readlinkSync(p);
    // A usr-merge alias (/bin -> usr/bin) is recreated as the same symlink; others are bound as what they point to.
    if (!path.isAbsolute(target) && p.split('/').length === 2) return { path: p, kind: 'symlink', target };
    return existsSync(p) ? { path: p, kind: 'bind', source: realpathSync(p) } : undefined;
  }
  return { path: p, kind: 'bind', source: p };
}

/** Files in a tool's folder that hold credentials, never shown (cargo's registry token, npm's and netrc logins). */
const TOOL_SECRETS = ['credentials', 'credentials.toml', '.credentials.toml', '.npmrc', '.netrc', '.git-credentials'];

/**
 * What of a tool folder in the home directory a sandbox shows: the programs and what they
 * load (a language's packages, a version manager's versions and plugins), never the rest —
 * `~/.local/share` and `~/.local/state` hold shell and REPL histories and keyrings, an npm
 * prefix's `etc/npmrc` its registry token, `~/.cargo` its credentials and caches. Anything
 * else a tool needs, the operator lists in FORKFLOW_SANDBOX_TOOL_PATHS.
 */
const TOOL_SUBDIRS = ['bin', 'shims', 'lib', 'lib64', 'libexec', 'include', 'versions', 'installs', 'plugins', 'toolchains', 'tools', 'pkg'];

/** npm's global configuration files, which may hold a registry token, wherever a prefix the sandbox shows keeps them. */
function npmGlobalConfigs(env: NodeJS.ProcessEnv): string[] {
  const prefixes = ['/usr', '/usr/local', path.dirname(path.dirname(process.execPath)), ...(env.NPM_CONFIG_PREFIX ? [env.NPM_CONFIG_PREFIX] : [])];
  return [...prefixes.map((p) => path.join(p, 'etc', 'npmrc')), ...[env.NPM_CONFIG_GLOBALCONFIG, env.NPM_CONFIG_USERCONFIG].filter((p): p is string => !!p && path.isAbsolute(p))];
}

const isDir = (p: string) => {
  try {
    return lstatSync(realpathSync(p)).isDirectory();
  } catch {
    return false;
  }
};

/**
 * Tool folders outside the system directories: those on the worker's PATH (for a folder
 * `~/X/bin` or `~/X/shims` in its home, what the tool keeps beside its programs in `~/X` —
 * `TOOL_SUBDIRS` only, as pyenv, pip's user site, an npm prefix and Go keep their packages
 * and versions there; rustup's `~/.rustup` with `~/.cargo`), and what the operator lists in
 * FORKFLOW_SANDBOX_TOOL_PATHS. Never the home directory itself.
 */
export function toolPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME ? canonicalish(env.HOME) : undefined;
  const found = new Set<string>();
  for (const dir of (env.PATH ?? '').split(':')) {
    if (!path.isAbsolute(dir) || !isDir(dir)) continue;
    const tool = realpathSync(dir);
    if (tool === '/' || tool === home || SYSTEM_DIRS.some((d) => within(tool, canonicalish(d)))) continue;
    const folder = path.dirname(tool);
    if (home && within(tool, home) && /^(bin|shims)$/.test(path.basename(tool)) && folder !== home) {
      for (const sub of TOOL_SUBDIRS) if (isDir(path.join(folder, sub))) found.add(realpathSync(path.join(folder, sub)));
    } else found.add(tool);
    if (home && folder === path.join(home, '.cargo')) {
      const rustup = canonicalish(env.RUSTUP_HOME ?? path.join(home, '.rustup'));
      if (isDir(rustup)) found.add(rustup);
    }
  }
  for (const extra of (envSetting(env, 'FORKFLOW_SANDBOX_TOOL_PATHS') ?? '').split(':')) if (path.isAbsolute(extra) && isDir(extra)) found.add(realpathSync(extra));
  return [...found];
}

/** Credential files inside the tool folders and npm's global configurations: protected like the worker's own state. */
export function toolSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  return [...toolPaths(env).flatMap((dir) => TOOL_SECRETS.map((name) => path.join(dir, name))), ...npmGlobalConfigs(env)];
}

let cachedSystem: SystemEntry[] | undefined;

/**
 * The system entries that exist on this host, computed once per process: the system
 * directories, the `/etc` allow-list, the Node installation running the worker when it
 * lives elsewhere (a `node` under /opt or a version manager's folder), and the tool folders.
 */
export function systemEntries(): readonly SystemEntry[] {
  if (cachedSystem) return cachedSystem;
  const entries: SystemEntry[] = [];
  for (const dir of SYSTEM_DIRS) {
    const e = entryOf(dir);
    if (e) entries.push(e);
  }
  let etc: string[] = [];
  try {
    etc = readdirSync('/etc').filter((name) => ETC_PATTERNS.some((p) => p.test(name)));
  } catch {
    // no /etc to read
  }
  for (const name of [...ETC_ENTRIES, ...etc]) {
    const e = entryOf(`/etc/${name}`);
    if (e) entries.push(e);
  }
  const nodePrefix = path.dirname(path.dirname(realpathSync(process.execPath)));
  if (!entries.some((e) => e.kind === 'bind' && within(nodePrefix, e.source)) && nodePrefix !== '/') {
    entries.push({ path: nodePrefix, kind: 'bind', source: nodePrefix });
  }
  for (const tool of toolPaths()) if (!entries.some((e) => e.kind === 'bind' && within(tool, e.source))) entries.push({ path: tool, kind: 'bind', source: tool });
  cachedSystem = entries;
  return entries;
}

/** Canonical roots of the system view (where a symlinked alias really points). */
function systemRoots(): string[] {
  return systemEntries().flatMap((e) => (e.kind === 'bind' ? [e.source] : []));
}

/** `h` lies strictly inside `top` (not `top` itself). */
const strictlyInside = (h: string, top: string) => h !== top && within(h, top);

/**
 * Whether a fork with `view` may see the canonical path `p`: never inside a protected path;
 * inside the workspace or an allowed path unless under a hidden `.forkflow/` strictly
 * inside that same tree; in the system view.
 */
export function canSee(view: FsView, p: string): boolean {
  if (view.protected.some((h) => within(p, h))) return false;
  const inTree = (top: string) => within(p, top) && !view.hidden.some((h) => strictlyInside(h, top) && within(p, h));
  return inTree(view.root) || view.readPaths.some(inTree) || systemRoots().some((r) => within(p, r));
}

/** Protected and hidden paths that lie strictly inside something mounted for `view` (masked there). */
export function hiddenInside(view: FsView, mounted: readonly string[]): string[] {
  const masks = new Set<string>();
  for (const h of view.protected) if (mounted.some((m) => strictlyInside(h, m))) masks.add(h);
  for (const h of view.hidden) if (mounted.some((m) => strictlyInside(h, m))) masks.add(h);
  return [...masks];
}

/**
 * The view of a fork on `root` (canonical), with the worker's protected paths. `.forkflow/`
 * at the top of the workspace and of each allowed path is hidden: the dev server's
 * database, blobs, worktrees and agent files live there by default. An allowed path inside
 * a protected one is dropped.
 */
export function viewFor(root: string, readPaths: readonly string[], protectedPaths: readonly string[]): FsView {
  const allowed = readPaths.filter((r) => !protectedPaths.some((h) => within(r, h)));
  return { root, readPaths: allowed, protected: [...protectedPaths], hidden: [root, ...allowed].map((top) => path.join(top, '.forkflow')) };
}

/** Whether users other than the owner may enter `dir` (every ancestor searchable, itself readable too; a file: readable). */
export function othersMayEnter(dir: string): boolean {
  try {
    const st = statSync(dir);
    if ((st.mode & (st.isDirectory() ? 0o005 : 0o004)) === 0) return false;
    if (st.isDirectory() && (st.mode & 0o005) !== 0o005) return false;
    for (let d = path.dirname(dir); ; d = path.dirname(d)) {
      if ((statSync(d).mode & 0o001) === 0) return false;
      if (d === path.dirname(d)) return true;
    }
  } catch {
    return false;
  }
}

