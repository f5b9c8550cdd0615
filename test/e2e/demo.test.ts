/**
 * The README's main command, end to end: `forkflow demo` boots its own dev server, worker and
 * offline model and runs the scenario (here with --exit instead of serving until Ctrl-C).
 */
import { freePort } from '../../src/worker/dev-server';
import { runForkflow } from '../kit/processes';

jest.setTimeout(180_000);

test('the demo runs the parent, three forks, a message, a cancel, and prints reports and usage', async () => {
  const [port, uiPort] = [await freePort(), await freePort()];
  const { ANTHROPIC_API_KEY: _offline, ...env } = process.env;
  const r = await runForkflow(['demo', '--in-memory', '--exit', '--port', String(port), '--ui-port', String(uiPort)], env as Record<string, string>);
  expect(r.stderr).not.toContain('demo failed');
  expect(r.status).toBe(0);
  const out = r.stdout;
  expect(out).toContain('offline emulator');
  expect(out).toMatch(/1\. A parent agent surveys the repository[\s\S]*completed after \d+ turns/);
  expect(out).toMatch(/── turn-loop · completed/);
  expect(out).toMatch(/── offline-model · completed/);
  expect(out).toMatch(/── tools-audit · killed \(partial result\)/);
  // The message reached the second fork: its report is about the follow-up it asked for.
  expect(out).toContain('message from demo');
  // Per-fork usage, cache tokens included; siblings read the parent's cached prefix.
  const reads = [...out.matchAll(/^\s{3}(turn-loop|offline-model|tools-audit)\s+in \d+ · cache read (\d+) · cache write (\d+) · out (\d+)$/gm)];
  expect(reads.map((m) => m[1])).toEqual(['turn-loop', 'offline-model', 'tools-audit']);
  for (const m of reads) expect(Number(m[2])).toBeGreaterThan(0);
  expect(out).toContain(`http://127.0.0.1:${uiPort}/namespaces/default/workflows/`);
});
