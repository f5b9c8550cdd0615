/**
 * The JSON inputs the docs show, by name, each with the validator the product itself applies
 * at that boundary: a ```json block names one in its info string (```json fork-input), and a
 * `temporal workflow signal|update --name <name> --input '<json>'` line is checked with the
 * message's own schema. A JSON block that names none of these is an error: an example nobody
 * checks is an example that rots.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { validateForkInput, validateSnapshot } from '../../src/shared/wire/fork-input-validation';
import { approvalDecisionSchema, childOutcomeReportSchema, sendMessageSchema } from '../../src/shared/wire/messages';
import { backgroundChildArgsSchema, interruptArgsSchema } from '../../src/shared/tree/interrupt';
import { providersConfigSchema } from '../../src/shared/providers/providers';
import { validateDreamConfig } from '../../src/shared/dream/config';
import { serviceHookAnswerSchema, serviceHookCallSchema, serviceToolCallSchema, serviceToolResultSchema } from '../../src/shared/tools/service-contract';
import { evalSpecSchema } from '../../src/testing/eval/spec';
import { ROOT } from './markdown';

/** Problems with a value (empty: valid). */
export type Check = (value: unknown) => string[];

const issuesOf = (schema: z.ZodType): Check => (value) => {
  const parsed = schema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`);
};

/**
 * The input schema of each signal and update a workflow validates, by its wire name (the
 * handlers in src/workflows/fork/ parse with these schemas).
 */
export const MESSAGE_SCHEMAS: Record<string, z.ZodType> = {
  sendMessage: sendMessageSchema,
  interrupt: interruptArgsSchema,
  interruptTurn: interruptArgsSchema,
  backgroundChild: backgroundChildArgsSchema,
  decideApproval: approvalDecisionSchema,
  approvalDecision: approvalDecisionSchema,
  childOutcome: childOutcomeReportSchema,
};

export const MESSAGE_INPUTS: Record<string, Check> = Object.fromEntries(Object.entries(MESSAGE_SCHEMAS).map(([name, schema]) => [name, issuesOf(schema)]));

/**
 * An `overrides` snippet for a project that depends on forkflow: every `@temporalio/*` package
 * it pins must be pinned at the version forkflow's own package.json depends on, or the project
 * loads two copies of the SDK.
 */
function packageOverrides(value: unknown): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const overrides = (value as { overrides?: unknown } | null)?.overrides;
  if (!overrides || typeof overrides !== 'object') return ['(input): expected an "overrides" object'];
  const problems: string[] = [];
  const walk = (node: unknown, path: string[]) => {
    if (typeof node === 'string') {
      const name = path[path.length - 1]!;
      const wanted = name.startsWith('@temporalio/') ? (pkg.dependencies[name] ?? pkg.dependencies['@temporalio/client']) : undefined;
      if (wanted !== undefined && node !== wanted) problems.push(`${path.join(' > ')}: pins ${node}, but forkflow depends on ${wanted}`);
      return;
    }
    if (!node || typeof node !== 'object') return void problems.push(`${path.join(' > ')}: expected a version or an object`);
    for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
  };
  walk(overrides, ['overrides']);
  if (!JSON.stringify(overrides).includes(pkg.dependencies['@temporalio/client']!)) problems.push(`overrides: pins no package at the SDK version forkflow uses (${pkg.dependencies['@temporalio/client']})`);
  return problems;
}

/** What a ```json block's first tag may name, and how it is checked. */
export const JSON_INPUTS: Record<string, { describe: string; check: Check; wrap?: (text: string) => string }> = {
  'fork-input': { describe: "forkWorkflow's input (validateForkInput)", check: (v) => { const r = validateForkInput(v); return r.ok ? [] : r.issues; } },
  snapshot: { describe: 'a parent snapshot (validateSnapshot)', check: (v) => { const r = validateSnapshot(v); return r.ok ? [] : r.issues; } },
  'dream-config': { describe: "autoDreamWorkflow's input (validateDreamConfig)", check: (v) => { const r = validateDreamConfig(v); return r.ok ? [] : r.issues; } },
  'eval-spec': { describe: '`forkflow eval` / `runEval` spec (evalSpecSchema)', check: issuesOf(evalSpecSchema) },
  'tool-call': { describe: 'a forkflow.callTool activity input (serviceToolCallSchema)', check: issuesOf(serviceToolCallSchema) },
  'tool-result': { describe: 'a forkflow.callTool activity result (serviceToolResultSchema)', check: issuesOf(serviceToolResultSchema) },
  'hook-call': { describe: 'a forkflow.hook activity input (serviceHookCallSchema)', check: issuesOf(serviceHookCallSchema) },
  'hook-answer': { describe: 'a forkflow.hook activity answer (serviceHookAnswerSchema)', check: issuesOf(serviceHookAnswerSchema) },
  providers: { describe: 'FORKFLOW_PROVIDERS (providersConfigSchema)', check: issuesOf(providersConfigSchema) },
  'package-overrides': { describe: 'a package.json `"overrides": {…}` member, pinning the SDK forkflow uses', check: packageOverrides, wrap: (text) => `{${text}}` },
  ...Object.fromEntries(Object.entries(MESSAGE_INPUTS).map(([name, check]) => [name, { describe: `the ${name} signal's or update's input`, check }])),
};
