// Lint rules that enforce the project's boundaries rather than taste:
// workflow code may not reach Node builtins, I/O libraries or the model SDK,
// and no promise may float anywhere.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const nodeBuiltins = [
  'assert', 'async_hooks', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns',
  'events', 'fs', 'fs/promises', 'http', 'http2', 'https', 'net', 'os', 'path', 'perf_hooks',
  'process', 'readline', 'stream', 'timers', 'tls', 'tty', 'url', 'util', 'v8', 'vm', 'worker_threads', 'zlib',
];
const ioLibraries = [
  '@anthropic-ai/sdk', '@temporalio/client', '@temporalio/worker', '@temporalio/activity',
  '@temporalio/testing', '@temporalio/envconfig', 'commander', 'cli-table3', 'log-update', 'uuid',
];

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', '.tools/', '.scratch/', '.forkflow/', 'coverage/', 'test-artifacts/', 'bin/', 'test/fixtures/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    // The workflow sandbox: deterministic code only (see src/workflows/README.md).
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          ...nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Workflow-safe code must not use Node builtins: move I/O to src/activities.' })),
          ...ioLibraries.map((name) => ({ name, message: 'Workflow-safe code must not import I/O libraries; import activity types only.', allowTypeImports: name.startsWith('@temporalio/') })),
        ],
      }],
      'no-restricted-globals': ['error',
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() in a loop.' },
        { name: 'fetch', message: 'No I/O in workflows.' },
        { name: 'process', message: 'No process access in workflows.' },
        { name: 'require', message: 'Import statically so the bundler sees it.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Math', property: 'random', message: 'Use uuid4()/random from @temporalio/workflow only where needed.' },
        { object: 'Date', property: 'now', message: 'Workflow time comes from the SDK; pass times in explicitly.' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
);
