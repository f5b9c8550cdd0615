/**
 * Two projects: `unit` (pure code, the emulator, tools on temp dirs) needs no server;
 * `temporal` runs against one real Temporal dev server started for the whole run.
 */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 180_000,
  maxWorkers: 1,
  // One test file at a time, but in a worker process that jest replaces once a file leaves it
  // above this much heap: in one process for the whole run, the temporal project's heap grew
  // past 1 GB within seven files, and the official CI's run ended with jest killed by a signal
  // after 35 minutes. A worker also confines a crash to its own file.
  workerIdleMemoryLimit: '800MB',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'temporal',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts', '<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/kit/global-setup.ts',
      globalTeardown: '<rootDir>/test/kit/global-teardown.ts',
    },
    {
      // The self-hosted stack (scripts/stack/): `npm run test:stack`, not part of `npm run jest`.
      displayName: 'stack',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/stack/**/*.test.ts'],
    },
  ],
};
