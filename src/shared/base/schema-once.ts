/**
 * Builds each module-level zod schema once per workflow context instead of once per workflow.
 *
 * A worker evaluates the workflow bundle's modules again for every workflow it instantiates
 * (a fork's first workflow task, and every replay after its cache entry was evicted). Building
 * the module-level schemas of src/shared was most of that (about 12 of 14 ms per fork), and zod
 * compiles each object schema's parser again on its first parse. Sibling forks started together
 * queue behind each other on the one workflow thread, so this was most of their start latency.
 *
 * This module is preloaded into the worker's shared workflow context (src/worker/bundle.ts),
 * so the map below is one per context and outlives every workflow. The SDK freezes preloaded
 * modules' exports, which is why the schemas are not simply preloaded themselves: zod writes
 * lazily initialised fields into a schema the first time it is used, and a frozen schema would
 * fail that workflow task. A closure's map is out of the freezer's reach.
 *
 * Sharing is safe because a schema is a pure value: nothing a workflow does changes what it
 * accepts or returns. Keep it that way: a schema built here must not close over per-workflow
 * state (its refinements and transforms call only pure functions), and its `.default()` values
 * are plain data that zod copies on every parse.
 *
 * Outside a workflow (activities, the client, tests) it is an ordinary module-level cache.
 */
const built = new Map<string, unknown>();

/**
 * The schema built for `key` in this context, building it with `build` the first time. Keys are
 * `<file under src/shared, or src/…>#<name>`, one per module-level constant.
 */
export function schemaOnce<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const schema = build();
  built.set(key, schema);
  return schema;
}
