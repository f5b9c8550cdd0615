/**
 * The floors of src/ and what may import what, checked from the sources (not remembered):
 *
 *   shared → workflows | activities | offline | gateway | payloads → worker → client → testing → cli
 *
 * A floor may import only floors to its left. The five middle siblings do not import each
 * other, except workflow code importing activity *types* (proxyActivities needs them; types
 * are erased). Workflow-safe code (src/workflows, src/shared) imports nothing Node-side.
 * The client loads no worker code. src/workflows/fork/ has no import circle.
 */
import { builtinModules } from 'node:module';
import { circles, importsOf, sourceFiles, type Import } from '../kit/imports';

const FLOOR: Record<string, number> = { shared: 0, workflows: 1, activities: 1, offline: 1, gateway: 1, payloads: 1, worker: 2, client: 3, testing: 4, cli: 5 };
const top = (path: string) => path.split('/')[0]!;
const imports = sourceFiles().flatMap(importsOf);
const describeImport = (i: Import) => `${i.from} → ${i.to}${i.typeOnly ? ' (types)' : ''}`;

test('every file of src/ lies on a known floor', () => {
  expect(imports.length).toBeGreaterThan(100);
  const unknown = [...new Set(sourceFiles().map((f) => top(f.slice(f.indexOf('/src/') + 5))))].filter((t) => !(t in FLOOR) && !t.endsWith('.ts'));
  expect(unknown).toEqual([]);
});

test('no floor imports a higher floor', () => {
  const upward = imports.filter((i) => i.relative && FLOOR[top(i.to)]! > FLOOR[top(i.from)]!);
  expect(upward.map(describeImport)).toEqual([]);
});

test('workflows, activities, offline, gateway and payloads do not import each other (workflow code may import activity types)', () => {
  const siblings = imports.filter((i) => i.relative && top(i.from) !== top(i.to) && FLOOR[top(i.from)] === 1 && FLOOR[top(i.to)] === 1);
  const allowed = (i: Import) => top(i.from) === 'workflows' && top(i.to) === 'activities' && i.typeOnly;
  expect(siblings.filter((i) => !allowed(i)).map(describeImport)).toEqual([]);
});

test('workflow-safe code imports no Node builtin and no Node-side package', () => {
  const nodeSide = new Set(['@anthropic-ai/sdk', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing', '@temporalio/envconfig', 'commander', 'cli-table3', 'log-update', 'fast-glob', 'ignore', 'web-tree-sitter', 'tree-sitter-bash', 'sh-syntax', 'playwright-core']);
  const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
  const bad = imports.filter((i) => (top(i.from) === 'workflows' || top(i.from) === 'shared') && !i.relative && !i.typeOnly && (builtins.has(i.to) || nodeSide.has(i.to)));
  expect(bad.map(describeImport)).toEqual([]);
});

test('the client loads no worker, activity or workflow code (a service imports it on its own)', () => {
  // src/payloads is the data converter a client must share with workers.
  const heavy = imports.filter((i) => i.relative && top(i.from) === 'client' && !['client', 'shared', 'payloads'].includes(top(i.to)));
  expect(heavy.map(describeImport)).toEqual([]);
});

test('src/workflows/fork/ has no import circle (type imports included)', () => {
  expect(circles(imports, (f) => f.startsWith('workflows/fork/'))).toEqual([]);
});

test('the scanner sees circles and upward imports when they exist', () => {
  const fake: Import[] = [
    { from: 'workflows/fork/a.ts', to: 'workflows/fork/b.ts', relative: true, typeOnly: true },
    { from: 'workflows/fork/b.ts', to: 'workflows/fork/a.ts', relative: true, typeOnly: false },
    { from: 'workflows/fork/c.ts', to: 'workflows/fork/a.ts', relative: true, typeOnly: false },
  ];
  expect(circles(fake, () => true)).toEqual([['workflows/fork/a.ts', 'workflows/fork/b.ts']]);
  const agent = importsOf(`${__dirname}/../../src/workflows/fork/agent.ts`);
  expect(agent.find((i) => i.to === 'workflows/fork/setup.ts')).toMatchObject({ relative: true, typeOnly: true });
  expect(agent.find((i) => i.to === 'shared/wire/constants.ts')).toMatchObject({ relative: true, typeOnly: false });
});
