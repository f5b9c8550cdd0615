/**
 * Model allowlists, kept per provider. A tree's model calls go to one provider (the one its
 * workers' model client speaks to, `subAgents.provider`); a model is allowed when that
 * provider's list names it. A model listed only under another provider is refused: it is
 * not served where this tree runs, and flattening the lists would let it through.
 *
 * Workflow-safe and pure: the workflow checks every way a child's model is chosen (the
 * Agent call's `model`, a named agent's frontmatter, a skill's frontmatter, a fork
 * inheriting its parent's model) with {@link modelRefusal}.
 */
import { z } from 'zod';
import { compareCodeUnits, modelIdSchema, providerNameSchema } from '../agents/agents';
import { schemaOnce } from '../base/schema-once';

/** A provider key as configured (`anthropic`, `bedrock`, `vertex`, a gateway's name); defined beside the agent fields that use it. */
export { providerNameSchema };

/** `{ provider: [model, …] }`; each list is what that provider may serve to this tree. */
export const modelAllowlistSchema = schemaOnce('providers/model-allowlist#modelAllowlistSchema', () => z.record(providerNameSchema, z.array(modelIdSchema)));
export type ModelAllowlist = z.infer<typeof modelAllowlistSchema>;

/** The provider a tree runs on when its input names none (the worker's Anthropic client). */
export const DEFAULT_PROVIDER = 'anthropic';

/** Where a child's model came from: said in the refusal, so the model knows what to change. */
export type ModelSource =
  | { kind: 'call' } // the Agent call's `model` argument
  | { kind: 'definition'; agent: string } // a named agent's frontmatter `model:`
  | { kind: 'skill'; skill: string } // a skill's frontmatter `model:`
  | { kind: 'setting'; name: string } // a tree setting (`subAgents.spawnModel`)
  | { kind: 'inherited' }; // a fork (or an agent without a model of its own) runs on the caller's model

function origin(model: string, source: ModelSource): string {
  switch (source.kind) {
    case 'call':
      return `Model "${model}"`;
    case 'definition':
      return `Agent type "${source.agent}" is configured with model "${model}", which`;
    case 'skill':
      return `Skill "${source.skill}" is configured with model "${model}", which`;
    case 'setting':
      return `This tree's ${source.name} is model "${model}", which`;
    case 'inherited':
      return `Your own model "${model}", which a fork or an agent without a model of its own inherits,`;
  }
}

/**
 * Why `model` may not run under `allowlist` on `provider`, or undefined when it may (no
 * allowlist: every model). The message names the allowed models of that provider and, if
 * the model is listed elsewhere, the provider that lists it.
 *
 * @example modelRefusal({ allowlist: { anthropic: ['m1'] }, provider: 'anthropic', model: 'm1', source: { kind: 'call' } }) // undefined
 */
export function modelRefusal(args: { allowlist: ModelAllowlist | undefined; provider: string; model: string; source: ModelSource }): string | undefined {
  const { allowlist, provider, model, source } = args;
  if (!allowlist) return undefined;
  const allowed = [...new Set(allowlist[provider] ?? [])].sort(compareCodeUnits);
  if (allowed.includes(model)) return undefined;
  const elsewhere = Object.keys(allowlist)
    .filter((p) => p !== provider && allowlist[p]!.includes(model))
    .sort(compareCodeUnits);
  const listed = elsewhere.length ? ` It is listed for ${elsewhere.join(', ')}, not for ${provider}, where this agent tree runs.` : '';
  const choice = allowed.length ? `Allowed on ${provider}: ${allowed.join(', ')}.` : `No model is allowed on ${provider}.`;
  const fix = source.kind === 'call' ? ' Pass one of those as model, or omit model.' : source.kind === 'inherited' || source.kind === 'setting' ? ' Pick a subagent_type whose model is allowed, or pass an allowed model.' : '';
  return `${origin(model, source)} is not allowed here.${listed} ${choice}${fix}`;
}
