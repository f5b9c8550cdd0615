#!/usr/bin/env node
// Starts slow, test-only installs in the background at low priority so they overlap the
// typecheck and lint instead of adding to the test run's wall time. Tests that need them
// run the same installer, which waits on its lock for this one to finish.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Each installer has its own lock and they share nothing that needs one of ours (the Go
// builds share Go's module cache, which Go locks itself; Chromium comes from apt), so they
// run side by side rather than in one chain: the browser (seconds) need not queue behind the
// Go builds (minutes).
const installers = [
  // test/unit/compose.test.ts; one Go thread so the build leaves a core to the tests.
  { script: 'install-compose.sh', env: { GOMAXPROCS: '1' } },
  // test/e2e/web-ui.test.ts
  { script: 'install-chromium.sh', env: {} },
  // test/e2e/s3-payloads.test.ts
  { script: 'install-versitygw.sh', env: { GOMAXPROCS: '1' } },
  // test/e2e/bench-peer.test.ts: Node 24 from PyPI and bench/peer's own packages.
  { script: 'install-bench-peer.sh', env: {} },
  // test/stack/: the self-hosted server, SQL tool and UI server, built from source (the most
  // CPU of all: started first so it overlaps typecheck, lint and the unit tests; the stack
  // lane waits on its lock), and Debian's PostgreSQL.
  { script: 'install-temporal-server.sh', env: {} },
  { script: 'install-postgres.sh', env: {} },
];

for (const { script, env } of installers) {
  const child = spawn('nice', ['-n', '19', 'bash', join(root, 'scripts', script)], {
    cwd: root,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, ...env },
  });
  child.unref();
}
