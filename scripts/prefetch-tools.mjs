#!/usr/bin/env node
// Starts slow, test-only installs in the background at low priority so they overlap the
// typecheck and lint instead of adding to the test run's wall time. Tests that need them
// run the same installer, which waits on its lock for this one to finish.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const child = spawn('nice', ['-n', '19', 'bash', join(root, 'scripts', 'install-compose.sh')], {
  cwd: root,
  detached: true,
  stdio: 'ignore',
  env: { ...process.env, GOMAXPROCS: '1' },
});
child.unref();
