#!/usr/bin/env node
// Makes a fresh clone runnable before `npm start` / `npm test` / `npm run bench` do their
// work: installs the locked npm packages when node_modules is missing or out of date, and
// compiles src/ to lib/ when lib/ is older than the sources. Dependency-free on purpose (it
// runs before anything is installed). The Temporal CLI is installed on first need by
// src/worker/temporal-cli.ts, pinned, into the git-ignored .tools/ folder.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const say = (line) => process.stderr.write(`bootstrap: ${line}\n`);

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    say(`\`${cmd} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 3)) {
  say(`Node ${process.versions.node} is too old: forkflow needs Node >= 20.3.`);
  process.exit(1);
}

// 1. npm packages, exactly as locked. Not `npm ci`: registry mirrors that serve only this
// platform's optional binaries (as here) yield locks without other platforms' entries, which
// `npm ci` rejects. `npm install` against the lock installs the same versions; the check
// below makes sure it did not re-resolve anything.
const lockPath = join(root, 'package-lock.json');
const lockHash = () => createHash('sha256').update(readFileSync(lockPath)).digest('hex');
const locked = lockHash();
const marker = join(root, 'node_modules', '.forkflow-lock-sha256');
if (!existsSync(marker) || readFileSync(marker, 'utf8') !== locked) {
  say('installing npm packages as locked...');
  run('npm', ['install', '--no-audit', '--no-fund']);
  if (lockHash() !== locked) {
    say('package-lock.json changed during install: package.json and the lock disagree. Commit the updated lock, or revert package.json.');
    process.exit(1);
  }
  writeFileSync(marker, locked);
}

// 2. Compiled CLI and library.
function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}
const stamp = join(root, 'lib', '.build-stamp');
const sourcesChanged = Math.max(newestMtime(join(root, 'src')), statSync(join(root, 'tsconfig.json')).mtimeMs, statSync(join(root, 'package-lock.json')).mtimeMs);
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sourcesChanged) {
  say('compiling src/ to lib/ ...');
  run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  writeFileSync(stamp, new Date().toISOString());
}

// 3. The OS sandbox every fork's Bash commands run in (without it the worker says so at
// start and refuses Bash, unless started with FORKFLOW_ALLOW_UNSANDBOXED=1).
if (process.platform === 'linux') {
  const sandbox = spawnSync('bash', [join(root, 'scripts', 'install-bubblewrap.sh')], { cwd: root, stdio: 'inherit' });
  if (sandbox.status !== 0) say('bubblewrap is not available: workers will refuse Bash until it is installed (or run it without the sandbox with FORKFLOW_ALLOW_UNSANDBOXED=1).');
}
