/**
 * The README's main command, end to end: `forkflow demo` boots its own dev server, worker and
 * offline model and runs the scenario (here with --exit instead of serving until Ctrl-C).
 */
import { freePort } from '../../src/worker/dev-server';
import { runForkflow } from '../kit/processes';

jest.setTimeout(180_000);

test('the demo runs the parent, three forks, a message, a cancel, an agent tree, a resume and an agent with its own tools, and prints reports and usage', async () => {
  const [port, uiPort] = [await freePort(), await freePort()];
  const { ANTHROPIC_API_KEY: _offline, ...env } = process.env;
  const r = await runForkflow(['demo', '--in-memory', '--exit', '--port', String(port), '--ui-port', String(uiPort)], env as Record<string, string>);
  expect(r.stderr).not.toContain('demo failed');
  expect(r.status).toBe(0);
  const out = r.stdout;
  // No activity needed a retry: a fork reading its parent's prefix while the parent's next turn
  // assembled the same conversation on this worker used to fail once ("has 5 messages; 4 were expected").
  expect(`${out}${r.stderr}`).not.toMatch(/\[(WARN|ERROR)\]/);
  expect(out).toContain('offline emulator');
  expect(out).toMatch(/1\. A parent agent surveys the repository[\s\S]*completed after \d+ turns/);
  // The parent's text streamed live (rendered as `forkflow watch` renders it), whole, before its result line.
  expect(out).toMatch(/1\. A parent agent[^\n]*live stream[\s\S]*│ → Glob[\s\S]*│ Three areas stand out: the turn loop \(src\/workflows\), the offline model \(src\/offline\) and the tools \(src\/activities\/tools\)\.\n[\s\S]*│ ■ completed \(end_turn\)\n\s+completed after \d+ turns/);
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

  // The tree: the lead's two Agent calls became child workflows that both completed and reported back.
  expect(out).toMatch(/lead completed after \d+ turns: Both reports are in/);
  const childRows = out.match(/│ demo-\d+-lead\.(fork|reviewer)-\d\s+│.*│ completed │/g) ?? [];
  expect(childRows).toHaveLength(2);
  expect(out).toMatch(/tree usage: in \d+ · cache read \d+/);
  // Both background children reported back through the lead's inbox, each once.
  const notes = [...out.matchAll(/notification in the lead's inbox: demo-\d+-lead\.(fork|reviewer)-\d completed/g)].map((m) => m[1]).sort();
  expect(notes).toEqual(['fork', 'reviewer']);
  // The follow-up, by name, resumed the closed reviewer from its history.
  expect(out).toMatch(/message resumed; demo-\d+-lead\.reviewer-2 completed after \d+ turns: Add a test for renamed parents\./);

  // Your own tools: the order desk's worker answered lookup_order, the filesystem MCP server listed the repository.
  expect(out).toMatch(/8\. Your own tools: an order desk's worker serves lookup_order on "[^"]+-order-desk"; the filesystem MCP server \(stdio\) lists this repository/);
  expect(out).toMatch(/← lookup_order: \{"order_id":"A-100","status":"shipped"/);
  expect(out).toMatch(/← mcp__repo__list_directory: .*\[(DIR|FILE)\] /);
  expect(out).toMatch(/MCP server repo: ready, 2 tools, session on \S+@mcp-/);
  expect(out).toMatch(/demo-\d+-tools completed after 3 turns: Order A-100 shipped/);
});
