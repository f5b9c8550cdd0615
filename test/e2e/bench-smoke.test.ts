/**
 * Smoke versions of the performance benchmarks (bench:load, bench's per-phase breakdown and
 * Temporal floor, bench:fork's sibling latency) at tiny sizes: they must run end to end and produce sane
 * figures. No timing thresholds: a slow machine passes, a broken measurement does not.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { turnFloor } from '../../bench/floor';
import { runLoad } from '../../bench/load/run';
import { phaseSamples, PHASES } from '../../bench/phases';
import { siblingLatency } from '../../bench/siblings';
import { startHarness, testEnv, uniqueTaskQueue, type Harness } from '../kit/env';
import { bigSnapshot } from '../kit/snapshots';

describe('bench smoke', () => {
  it('bench:load runs forks on a worker process of its own and reports every figure', async () => {
    const env = testEnv();
    const figures = await runLoad({
      address: env.address,
      namespace: env.namespace,
      taskQueue: uniqueTaskQueue('load-smoke'),
      forks: 3,
      turns: 2,
      latencyMs: 0,
      latencyJitterMs: 20,
      bundlePath: env.bundlePath,
    });
    expect(figures.failures).toEqual([]);
    expect(figures.completed).toBe(3);
    // 2 turns each: one Read, then the reply.
    expect(figures.modelRequests).toBe(6);
    expect(figures.modelErrors).toBe(0);
    expect(figures.turnsPerSecond).toBeGreaterThan(0);
    for (const p of [figures.startLatencyMs.p50, figures.startLatencyMs.p95, figures.startLatencyMs.p99]) expect(p).toBeGreaterThanOrEqual(0);
    expect(figures.startLatencyMs.p50).toBeLessThanOrEqual(figures.startLatencyMs.p99);
    // A live Node process holds tens of MB at least; a broken sampler reads 0 or NaN.
    expect(figures.workerRssMb.peak).toBeGreaterThan(20);
    expect(figures.workerRssMb.peak).toBeGreaterThanOrEqual(figures.workerRssMb.atStart);
  }, 90_000);

  describe('with a worker in this process', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness({ name: 'bench-smoke' });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("bench's per-phase breakdown finds every phase of a durable turn in a run's history", async () => {
      writeFileSync(join(h.workspaceRoot, 'small.txt'), 'one\n');
      h.model.log.clear();
      const handle = await h.forkflow.start({ prompt: 'Phases.\n@repeat 2 @tool Read {"file_path":"small.txt"}\n@reply done', maxTurns: 5 });
      expect((await handle.result()).turns).toBe(3);
      const events = (await h.client.workflow.getHandle(handle.agentId).fetchHistory()).events ?? [];
      const samples = phaseSamples(events, h.model.log.entries().filter((e) => e.path === '/v1/messages'));
      // Three model calls, each an activity with a model request inside it.
      expect(samples['activity start → model request']).toHaveLength(3);
      expect(samples['model response end → activity completed']).toHaveLength(3);
      for (const phase of PHASES) {
        expect(samples[phase]!.length).toBeGreaterThan(0);
        for (const v of samples[phase]!) expect(v).toBeGreaterThanOrEqual(0);
      }
    });

    it("bench's Temporal floor runs bare turns in each shape and measures every gap", async () => {
      for (const shape of ['fork', 'remote', 'local'] as const) {
        const { gaps, phases } = await turnFloor({ address: h.env.address, namespace: h.env.namespace, turns: 3, runs: 2, shape });
        // Two measured runs of three turns: two gaps each (the warm-up run is not counted).
        expect(gaps).toHaveLength(4);
        for (const g of gaps) expect(g).toBeGreaterThan(0);
        // The model call is an activity in history (three a run) unless the shape makes it local.
        expect(phases['activity queued']).toHaveLength(shape === 'local' ? 0 : 6);
        expect(phases['workflow task on worker']!.length).toBeGreaterThan(0);
      }
    });

    it("bench:fork's sibling latency compares siblings with empty workflows in one run", async () => {
      const connection = await NativeConnection.connect({ address: h.env.address });
      try {
        const snapshot = bigSnapshot({ conversationBytes: 2_000, pendingToolUses: 2 });
        const l = await siblingLatency({ client: h.forkflow, model: h.model, connection, namespace: h.env.namespace, snapshot, n: 2 });
        expect(l.siblings).toBe(2);
        expect(l.sibling.p50).toBeGreaterThanOrEqual(0);
        expect(l.empty.p50).toBeGreaterThan(0);
        expect(l.sibling.p95).toBeGreaterThanOrEqual(l.sibling.p50);
        expect(Number.isFinite(l.ratio)).toBe(true);
        // Four phases from each sibling's history; those the server timed cannot be negative.
        expect(l.phases.map((p) => p.name)).toHaveLength(4);
        for (const p of l.phases.slice(1)) expect(p.p50).toBeGreaterThanOrEqual(0);
      } finally {
        await connection.close();
      }
    });
  });
});
