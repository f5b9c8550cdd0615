#!/usr/bin/env node
// `npm run bench:peer`: installs Node 24 and the peer's packages (scripts/install-bench-peer.sh,
// pinned, first run only), then runs bench/peer.ts under that Node, so forkflow's worker and
// the peer's run under one Node. Arguments and BENCH_PEER_* variables pass through.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const install = spawnSync('bash', [join(root, 'scripts', 'install-bench-peer.sh')], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
if (install.status !== 0) process.exit(install.status ?? 1);
const node = install.stdout.trim().split('\n').pop();
const run = spawnSync(node, ['-r', 'tsx/cjs', join(root, 'bench', 'peer.ts'), ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
