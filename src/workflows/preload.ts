/**
 * Modules the worker loads once into its reusable workflow context and shares between all
 * the workflows it runs (the SDK's `bundlerOptions.preloadModules`, see src/worker/bundle.ts),
 * instead of evaluating them again for every workflow it instantiates: zod's ~180 classes
 * were most of the CPU (about 80 of 100 ms) and much of the memory of starting or replaying
 * a forkflow workflow (bench:load).
 *
 * Only stateless libraries belong here. The SDK freezes what preloading leaves in globals and
 * module exports, so zod's lazily initialised process-wide state is set up now, before that:
 * its default locale and memoizer (kept on a global) and its probe of whether `new Function`
 * is allowed (cached in an exported object). Without this, the first schema a workflow
 * builds would try to write them into frozen objects and fail its workflow task.
 */
import * as zod from 'zod';

zod.config(zod.locales.en());
zod.config({ memoizer: zod.core.memoizer() });
// Parses through an object schema once: that runs (and caches) zod's `new Function` probe.
zod.object({ warm: zod.string() }).parse({ warm: '' });
void zod.core.util.allowsEval.value;

/** Referenced so the bundler keeps the import (zod declares itself free of side effects). */
export const preloaded = [zod];
