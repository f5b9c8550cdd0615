// Lint rules that enforce the project's boundaries rather than taste: workflow code may not
// reach Node builtins, Node globals, I/O libraries or the model SDK; no floor of src/ imports
// a higher one; and no promise may float anywhere.
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

// Floors of src/, lowest first: a folder may import only folders on lower floors.
//   shared → workflows | activities | offline | gateway | payloads → worker → client → testing → cli
// The client additionally loads no worker, activity or workflow code (services import it alone);
// it does load src/payloads, the data converter it must share with workers.
const forbiddenFolders = {
  shared: ['workflows', 'activities', 'offline', 'gateway', 'payloads', 'worker', 'client', 'testing', 'cli'],
  workflows: ['activities', 'offline', 'gateway', 'payloads', 'worker', 'client', 'testing', 'cli'],
  activities: ['workflows', 'offline', 'gateway', 'payloads', 'worker', 'client', 'testing', 'cli'],
  offline: ['workflows', 'activities', 'gateway', 'payloads', 'worker', 'client', 'testing', 'cli'],
  gateway: ['workflows', 'activities', 'offline', 'payloads', 'worker', 'client', 'testing', 'cli'],
  payloads: ['workflows', 'activities', 'offline', 'gateway', 'worker', 'client', 'testing', 'cli'],
  worker: ['client', 'testing', 'cli'],
  client: ['workflows', 'activities', 'offline', 'gateway', 'worker', 'testing', 'cli'],
  testing: ['cli'],
  cli: [],
};
const workflowSafe = new Set(['workflows', 'shared']);
const MAX_DEPTH = 5;

function floorBlocks() {
  const blocks = [];
  for (const [folder, forbidden] of Object.entries(forbiddenFolders)) {
    for (let depth = 1; depth <= MAX_DEPTH; depth++) {
      const up = String.raw`(\.\./){${depth}}`;
      const patterns = forbidden.map((target) => ({
        regex: `^${up}${target}(/.*)?$`,
        // Workflow code imports activity types for proxyActivities; types are erased from the bundle.
        ...(folder === 'workflows' && target === 'activities' ? { allowTypeImports: true } : {}),
        message: `src/${folder} may not import src/${target} (floors: shared → workflows | activities | offline | gateway | payloads → worker → client → testing → cli).`,
      }));
      const paths = workflowSafe.has(folder)
        ? [
            ...nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Workflow-safe code must not use Node builtins: move I/O to src/activities.' })),
            ...ioLibraries.map((name) => ({ name, message: 'Workflow-safe code must not import I/O libraries; import activity types only.', allowTypeImports: name.startsWith('@temporalio/') })),
          ]
        : [];
      if (patterns.length === 0 && paths.length === 0) continue;
      blocks.push({
        files: [`src/${folder}/${'*/'.repeat(depth - 1)}*.ts`],
        rules: { 'no-restricted-imports': ['error', { paths, patterns }] },
      });
    }
  }
  return blocks;
}

export default tseslint.config(
  { ignores: ['lib/', 'node_modules/', '.tools/', '.scratch/', '.forkflow/', 'coverage/', 'test-artifacts/', 'bin/', 'test/fixtures/', 'bench/peer/'] },
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
  // Floors, by path (see test/unit/boundaries.test.ts for the same rules checked on the
  // import graph): one block per folder and directory depth, so a relative import is matched
  // by what it resolves to — `../activities` is src/activities from src/workflows/*.ts but
  // the workflow-side proxies (src/workflows/activities.ts) from src/workflows/fork/*.ts.
  ...floorBlocks(),
  {
    // The workflow sandbox: deterministic code only (see src/workflows/README.md).
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error',
        ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask'].map((name) => ({ name, message: 'No Node timers in workflow-safe code: use sleep()/condition() from @temporalio/workflow.' })),
        ...['process', 'Buffer', '__dirname', '__filename', 'global', 'module', 'exports'].map((name) => ({ name, message: `No ${name} in workflow-safe code: it runs in Temporal's sandbox (move Node-side code to src/activities).` })),
        { name: 'fetch', message: 'No I/O in workflows.' },
        { name: 'require', message: 'Import statically so the bundler sees it.' },
      ],
      'no-restricted-properties': ['error',
        { object: 'Math', property: 'random', message: 'Use uuid4()/random from @temporalio/workflow only where needed.' },
        { object: 'Date', property: 'now', message: 'Workflow time comes from the SDK; pass times in explicitly.' },
      ],
    },
  },
  {
    // Small files (issue 45): a file of src/ that outgrows this owns more than one thing, so it is
    // split by responsibility, each new file named for what it owns. Comments and blank lines count.
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 350, skipBlankLines: false, skipComments: false }] },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The web view's page script (no build step): a browser module, not Node.
    files: ['web/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
    rules: {
      // Data reaches the page as text only (textContent, text nodes), never as markup.
      'no-restricted-properties': ['error',
        ...['innerHTML', 'outerHTML'].map((property) => ({ property, message: 'Insert text with textContent or append(string): never markup built from data.' })),
        ...['insertAdjacentHTML', 'write', 'writeln'].map((property) => ({ property, message: 'No markup built from data: create elements and set textContent.' })),
      ],
      'no-restricted-globals': ['error', { name: 'eval', message: 'No code from data.' }],
    },
  },
);
