/**
 * Tool services in processes of their own, as services run them: a TypeScript one built
 * with forkflow's helper, and a Python one written against the documented contract alone
 * (`temporalio` from PyPI, in a venv the test creates). A fork routes calls to both, and to
 * their hooks; what each returns, refuses and throws reaches the model as the contract says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness, tempDir, uniqueTaskQueue, type Harness } from '../kit/env';
import { startPythonToolWorker, startTsToolWorker, type ServiceProcess } from '../kit/service-processes';
import { script, toolResultsIn, toolStep } from '../kit/tree';

jest.setTimeout(600_000);

let h: Harness;
let stateDir: string;
let tsQueue: string;
let pyQueue: string;
let ts: ServiceProcess;
let py: ServiceProcess;

beforeAll(async () => {
  h = await startHarness({ name: 'tool-services' });
  stateDir = tempDir('tool-services');
  tsQueue = uniqueTaskQueue('ts-desk');
  pyQueue = uniqueTaskQueue('py-desk');
  [ts, py] = await Promise.all([
    startTsToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: tsQueue, stateDir }),
    startPythonToolWorker({ address: h.env.address, namespace: h.env.namespace, taskQueue: pyQueue, stateDir }),
  ]);
});
afterAll(async () => {
  await Promise.all([ts?.kill('SIGTERM'), py?.kill('SIGTERM')]);
  await h.close();
});

test('one fork, two services: a TypeScript worker and a Python worker in processes of their own, tools and hooks', async () => {
  const routes = [
    { tools: ['lookup_order'], taskQueue: pyQueue, readOnly: true },
    { tools: ['explode'], taskQueue: pyQueue },
    { tools: ['refund_order'], taskQueue: tsQueue },
  ];
  const prompt = script(
    'Help the customer.',
    toolStep('lookup_order', { order_id: 'P-1' }),
    toolStep('lookup_order', { order_id: 42 }),
    toolStep('explode', {}),
    toolStep('refund_order', { order_id: 'P-1', amount: 12.5 }),
    toolStep('refund_order', { order_id: 'P-2', amount: 1 }),
    '@reply helped',
  );
  // Hooks of both: the TypeScript policy (refunds over 100 denied) before every call, the Python one after lookups.
  const hooks = { PreToolUse: [{ taskQueue: tsQueue }], PostToolUse: [{ taskQueue: pyQueue, matcher: 'lookup_*' }] };
  const result = await h.forkflow.fork({ agentId: 'services-two', prompt, routes, hooks }, { mode: 'sync' });
  expect(result).toMatchObject({ status: 'completed', text: 'helped', toolUses: 5 });
  const [lookup, badInput, threw, refund, refund2] = toolResultsIn(await h.forkflow.transcript('services-two'));
  expect(lookup!.text).toContain('order P-1: shipped from the python desk');
  expect(lookup!.text).toContain('Checked by the python policy.');
  expect(badInput).toMatchObject({ isError: true, text: expect.stringContaining('Invalid input for lookup_order: order_id must be a non-empty string.') as string });
  expect(threw).toMatchObject({ isError: true, text: expect.stringContaining('the ledger is locked') as string });
  expect(refund).toEqual({ isError: false, text: 'refunded 12.5 on P-1' });
  expect(refund2).toEqual({ isError: false, text: 'refunded 1 on P-2' });
  expect(readFileSync(join(stateDir, 'py-ledger.txt'), 'utf8').trim().split('\n')).toHaveLength(1);
});

test('a Python hook denies a call before it runs', async () => {
  const prompt = script('Refund.', toolStep('refund_order', { order_id: 'P-9', amount: 3 }), '@reply could not');
  await h.forkflow.fork({ agentId: 'services-py-hook', prompt, routes: [{ tools: ['refund_order'], taskQueue: tsQueue }], hooks: { PreToolUse: [{ taskQueue: pyQueue }] } }, { mode: 'sync' });
  const [r] = toolResultsIn(await h.forkflow.transcript('services-py-hook'));
  expect(r).toEqual({ isError: true, text: 'refund_order was denied by policy: refunds are closed today' });
  // Only the two refunds of the first test ever ran on the TypeScript service.
  expect(readFileSync(join(stateDir, 'ledger.txt'), 'utf8').split('\n').filter((l) => l.startsWith('refund_order'))).toHaveLength(2);
});
