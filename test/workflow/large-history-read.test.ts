/**
 * A history page over 4 MB (a large tree's root: a thousand child starts of about 8 KB each)
 * reads through a connection forkflow makes (src/client/connection-options.ts). The SDK means
 * to raise grpc-js's 4 MB receive limit to 128 MB but names the option without its `grpc.`
 * prefix, so a connection made with its defaults alone refuses the page (bench:tree at
 * N = 1,000 failed reading its root's history this way).
 */
import { Client, Connection } from '@temporalio/client';
import { forkflowConnectionOptions } from '../../src/client/connection-options';
import { testEnv } from '../kit/env';
import { rejectionOf } from '../kit/wait';

jest.setTimeout(120_000);

test('a history page of about 6 MB reads through a forkflow connection, and not through the SDK defaults', async () => {
  const env = testEnv();
  const ours = await Connection.connect(forkflowConnectionOptions({ address: env.address }));
  // The SDK's defaults but its retries (it retries RESOURCE_EXHAUSTED for about 30 s before it gives up).
  const bare = await Connection.connect({ address: env.address, interceptors: [] });
  try {
    // The SDK's own converter (no external storage): each signal's 1 MB argument sits in history.
    const client = new Client({ connection: ours, namespace: env.namespace });
    const id = `large-history-${Date.now()}`;
    // No worker polls this queue: the workflow stays open, its history grows by its signals.
    const handle = await client.workflow.start('nobodyRunsThis', { taskQueue: `nobody-${id}`, workflowId: id });
    const mb = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 6; i++) await handle.signal('grow', mb);

    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(6);

    const refused = await rejectionOf(new Client({ connection: bare, namespace: env.namespace }).workflow.getHandle(id).fetchHistory());
    expect(String(refused)).toMatch(/RESOURCE_EXHAUSTED: Received message larger than max/);
    await handle.terminate('test over');
  } finally {
    await ours.close();
    await bare.close();
  }
});
