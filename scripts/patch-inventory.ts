/**
 * `npm run patches:inventory`: measures, for every patch id in src/workflows, which committed
 * histories (test/fixtures/histories/) carry its marker, which reach its `patched()` call and
 * get true (the new branch), and which get false (the old branch). The numbers in
 * docs/guides/patches.md come from this; re-run it before retiring a patch.
 *
 * Prints JSON: { patches: [{ id, constant, files, markers, newBranch, oldBranch }], failures }.
 */
import { HISTORY_FIXTURES } from '../test/kit/histories';
import { declaredPatches } from '../test/kit/patch-ids';
import { bundleProbe, patchMarkers, readHistories, replayWithProbe } from '../test/kit/patch-probe';

async function main(): Promise<void> {
  const histories = readHistories(HISTORY_FIXTURES);
  const bundle = await bundleProbe({}, { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (m: string) => console.error(m) });
  const { calls, outcomes } = await replayWithProbe(bundle, histories);
  const markers = new Map(histories.map((h) => [h.name, patchMarkers(h.history)]));
  const patches = declaredPatches().map((p) => {
    const reached = (answer: boolean): string[] => [...new Set(calls.filter((c) => c.patchId === p.id && c.answer === answer).map((c) => c.history))].sort();
    return { ...p, markers: [...markers].filter(([, m]) => m.has(p.id)).map(([name]) => name), newBranch: reached(true), oldBranch: reached(false) };
  });
  const unknown = [...new Set(calls.map((c) => c.patchId))].filter((id) => !patches.some((p) => p.id === id));
  console.log(JSON.stringify({ histories: histories.length, patches, unknownIds: unknown, failures: outcomes.filter((o) => o.error) }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
