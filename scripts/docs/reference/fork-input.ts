/**
 * docs/reference/fork-input.md: every field of forkWorkflow's input, from the JSON Schema that
 * `forkflow schema` prints (the zod schema of src/shared/wire/fork-input.ts): its type, default
 * and its `.describe()` text. The fields of the objects a caller fills in (the parent
 * snapshot, budget, sandbox, sub-agents…) get tables of their own. A field without a
 * description is an error, so a new field cannot reach users undocumented.
 */
import { forkInputJsonSchema } from '../../../src/shared/wire/fork-input-validation';
import { code, defaultOf, generatedHeader, objectOf, table, typeOf, type JsonSchema } from './render';

/** Fields whose own fields are listed too (the objects callers write; internal ones are not). */
export const EXPANDED = ['parent', 'budget', 'overrides', 'sandbox', 'workspace', 'approval', 'continueAsNew', 'from', 'subAgents'] as const;

const INTERNAL = /^Internal:\s*/;

/** Rows of a field table; throws for a field with no description. */
export function fieldRows(schema: JsonSchema, path: string, internal = false): string[][] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, field]) => {
    const description = field.description ?? objectOf(field)?.description;
    if (!description) throw new Error(`fork input field ${path}${name} has no description: add .describe('…') to its zod schema (src/shared/wire/fork-input.ts or the schema it uses), then run \`npm run docs\``);
    const fallback = required.has(name) ? 'required' : '';
    const anchor = (EXPANDED as readonly string[]).includes(`${path}${name}`) ? ` ([fields](#${name.toLowerCase()}))` : '';
    return [code(`${path}${name}`), code(typeOf(field)), defaultOf(field) || fallback, `${internal ? description.replace(INTERNAL, '').replace(/^./, (c) => c.toUpperCase()) : description}${anchor}`];
  });
}

export function forkInputPage(): string {
  const schema = forkInputJsonSchema() as JsonSchema;
  const isInternal = (name: string) => INTERNAL.test(schema.properties![name]!.description ?? '');
  const names = Object.keys(schema.properties ?? {});
  const pick = (internal: boolean) => fieldRows(schema, '', internal).filter((_, i) => isInternal(names[i]!) === internal);
  const head = ['field', 'type', 'default', 'description'];
  const sections = EXPANDED.map((name) => {
    const field = objectOf(schema.properties![name]!);
    if (!field) throw new Error(`fork input field ${name} is listed in EXPANDED but is not an object`);
    return `## ${name}\n\n${table(head, fieldRows(field, `${name}.`))}\n`;
  });
  return [
    generatedHeader(
      'The fork input',
      'the zod schema of src/shared/wire/fork-input.ts (its `.describe()` texts)',
      "`forkWorkflow` takes one JSON argument, validated with zod at the workflow's start: an invalid input fails the workflow at once with `InvalidForkInput` (its issues in the details), never a workflow-task retry loop. `forkflow schema` prints it as JSON Schema ([schemas/fork-input.json](schemas/fork-input.json)); the TypeScript client takes the same shape (`ForkInputJson`). How to use it: [Fork from a service](../guides/fork-from-a-service.md).",
    ),
    `## Fields\n\n${table(head, pick(false))}\n`,
    ...sections,
    `## Set by forkflow itself\n\nFields forkflow sets on the runs it starts (sub-agents, continuations, retries); a caller leaves them out.\n\n${table(head, pick(true))}\n`,
  ].join('\n');
}
