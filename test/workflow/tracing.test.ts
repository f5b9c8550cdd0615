/**
 * Tracing: each fork is one `fork.subagent` span carrying forkflow's fields, and the model
 * calls and tool calls it makes are spans beneath it (Temporal's OpenTelemetry interceptors,
 * read here from an in-memory exporter).
 */
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { startHarness, type Harness } from '../kit/env';

const exporter = new InMemorySpanExporter();
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'tracing', tracing: { spanProcessor: new SimpleSpanProcessor(exporter) } });
});
afterAll(() => h.close());

/** Span ids of a span's ancestors, nearest first. */
function ancestors(span: ReadableSpan, all: ReadableSpan[]): string[] {
  const chain: string[] = [];
  let parentId = span.parentSpanId;
  while (parentId) {
    chain.push(parentId);
    parentId = all.find((s) => s.spanContext().spanId === parentId)?.parentSpanId;
  }
  return chain;
}

test('a fork exports fork.subagent with every field, and its model and tool spans beneath it', async () => {
  const result = await h.forkflow.fork(
    { agentId: 'traced-fork', forkLabel: 'traced', prompt: 'Look.\n@tool Glob {"pattern":"*"}\n@reply seen', parentAgentId: 'the-parent' },
    { mode: 'sync' },
  );
  expect(result.status).toBe('completed');
  const spans = exporter.getFinishedSpans();
  const fork = spans.find((s) => s.name === 'fork.subagent');
  expect(fork).toBeDefined();
  const runId = (await h.client.workflow.getHandle('traced-fork').describe()).runId;
  expect(fork!.attributes).toMatchObject({
    fork_run_id: runId,
    parent_agent: 'the-parent',
    fork_label: 'traced',
    query_source: 'agent:builtin:fork',
    mode: 'sync',
    skip_transcript: false,
    agent_id: 'traced-fork',
    'fork.status': 'completed',
    'fork.turns': 2,
  });
  expect(fork!.attributes.cache_key_hash).toMatch(/^[0-9a-f]{64}$/);

  const forkId = fork!.spanContext().spanId;
  const under = (name: string) => spans.filter((s) => s.name.includes(name) && ancestors(s, spans).includes(forkId));
  expect(under('callModel').length).toBeGreaterThanOrEqual(2); // scheduled by the workflow, run by the worker
  expect(under('runTool').length).toBeGreaterThanOrEqual(1);
  const run = spans.filter((s) => s.name.startsWith('RunActivity:callModel'));
  expect(run.length).toBe(2);
  for (const s of run) expect(ancestors(s, spans)).toContain(forkId);
  for (const s of run) expect(s.spanContext().traceId).toBe(fork!.spanContext().traceId);
});
