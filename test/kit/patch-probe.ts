/**
 * Measures what each `patched()` call does while the committed histories replay, and builds
 * workflow bundles in which chosen patches are in a later retirement step, without editing
 * src/workflows (docs/guides/patches.md says what the steps are and why).
 *
 * How: the bundle is built with `@temporalio/workflow` (the bare specifier only) resolved to a
 * small generated module that re-exports the SDK and replaces `patched` and `deprecatePatch`.
 * The replacement reports each call and its answer through a sink that also runs during
 * replay (a `deprecatePatch` call as true: the new branch runs). For a patch given a step,
 * `patched(id)` calls `deprecatePatch(id)` and answers true (step "deprecated": the code once
 * the old branch is deleted), or calls nothing and answers true (step "removed": the code once
 * the call is deleted too; a `deprecatePatch(id)` the code already makes is dropped as well).
 * Everything else is the workflow code as shipped.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { History } from '@temporalio/common/lib/proto-utils';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { Sinks } from '@temporalio/workflow';
import { bundleWorkflowCode, type BundleOptions, type InjectedSinks } from '@temporalio/worker';
import { concatenateWorkflowModules, PRELOADED_WORKFLOW_MODULES } from '../../src/worker/bundle';
import { InboundGuardWorker } from '../../src/worker/inbound-guard-worker';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../../src/worker/tracing';

/** A retirement step a probe bundle applies to one patch id in place of `patched()`. */
export type PatchStep = 'deprecated' | 'removed';

/** One `patched()` call seen during a replay: which history, which patch, what it answered. */
export interface PatchCall {
  history: string;
  patchId: string;
  answer: boolean;
}

/** What replaying one history gave: its calls, and its error if it did not replay. */
export interface ReplayOutcome {
  history: string;
  error?: string;
}

interface ProbeSinks extends Sinks {
  patchProbe: { call(patchId: string, answer: boolean): void };
  exporter: { export(...spans: unknown[]): void };
}

/** The workflow-side module that stands in for `@temporalio/workflow` in a probe bundle. */
function shimSource(steps: Record<string, PatchStep>): string {
  const sdk = JSON.stringify(require.resolve('@temporalio/workflow/lib/index'));
  return `
const sdk = require(${sdk});
const steps = ${JSON.stringify(steps)};
const probe = sdk.proxySinks().patchProbe;
function patched(patchId) {
  const step = steps[patchId];
  let answer;
  if (step === 'deprecated') { sdk.deprecatePatch(patchId); answer = true; }
  else if (step === 'removed') answer = true;
  else answer = sdk.patched(patchId);
  probe.call(patchId, answer);
  return answer;
}
function deprecatePatch(patchId) {
  if (steps[patchId] === 'removed') return;
  sdk.deprecatePatch(patchId);
  probe.call(patchId, true);
}
module.exports = Object.assign({}, sdk, { patched, deprecatePatch });
`;
}

/** Bundles forkflow's workflows as the worker does, with `patched` instrumented and `steps` applied. */
export async function bundleProbe(steps: Record<string, PatchStep> = {}, logger?: BundleOptions['logger']): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'forkflow-patch-probe-'));
  const shim = join(dir, 'workflow-sdk-probe.js');
  writeFileSync(shim, shimSource(steps));
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    preloadModules: [...PRELOADED_WORKFLOW_MODULES],
    webpackConfigHook: (config) => {
      const concatenated = concatenateWorkflowModules(config);
      const alias = { ...(concatenated.resolve?.alias as Record<string, string> | undefined), '@temporalio/workflow$': shim };
      return { ...concatenated, resolve: { ...concatenated.resolve, alias } };
    },
    ...(logger ? { logger } : {}),
  });
  return code;
}

/** Reads every history under `root` (recursively), named `folder/file` without `.json`. */
export function readHistories(root: string): { name: string; history: History }[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(readFileSync(join(root, f), 'utf8'))) }));
}

/** Replays `histories` on forkflow's worker with a probe bundle; returns every call and each outcome. */
export async function replayWithProbe(bundle: string, histories: { name: string; history: History }[]): Promise<{ calls: PatchCall[]; outcomes: ReplayOutcome[] }> {
  const calls: PatchCall[] = [];
  const sinks: InjectedSinks<ProbeSinks> = {
    patchProbe: { call: { fn: (info, patchId, answer) => void calls.push({ history: info.workflowId, patchId, answer }), callDuringReplay: true } },
    // The tracing interceptor's sink: nothing to export from a replay, registered to keep the log quiet.
    exporter: { export: { fn: () => undefined } },
  };
  const outcomes: ReplayOutcome[] = [];
  const named = histories.map((h) => ({ workflowId: h.name, history: h.history }));
  for await (const result of InboundGuardWorker.runReplayHistories({ workflowBundle: { code: bundle }, sinks }, named)) {
    outcomes.push({ history: result.workflowId, ...(result.error ? { error: String(result.error) } : {}) });
  }
  return { calls, outcomes };
}

/** The `core_patch` markers a history carries: patch id → recorded as deprecated or not. */
export function patchMarkers(history: History): Map<string, { deprecated: boolean }> {
  const markers = new Map<string, { deprecated: boolean }>();
  for (const event of history.events ?? []) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') continue;
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    if (!data) continue;
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { id: string; deprecated?: boolean };
    markers.set(parsed.id, { deprecated: parsed.deprecated === true });
  }
  return markers;
}
