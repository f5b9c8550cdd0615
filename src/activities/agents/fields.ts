/**
 * Turns parsed frontmatter into an AgentDefinition one field at a time. A bad field is
 * reported and left out, and the agent still loads; only a bad `name` or `description`
 * skips the file. Tool restrictions fail closed: when a tool field cannot be read, the
 * agent gets no tools rather than all of them.
 */
import {
  AGENT_COLORS,
  EFFORT_LEVELS,
  MAX_DESCRIPTION_CHARS,
  MAX_INITIAL_PROMPT_CHARS,
  INHERIT_MODEL,
  ISOLATION_MODES,
  DELIVERY_MODES,
  MEMORY_SCOPES,
  PERMISSION_MODES,
  agentDefinitionSchema,
  agentFieldSchemas,
  skillNameSchema,
  toolNameSchema,
  type AgentDefinition,
  type AgentProblem,
} from '../../shared/agents/agents';
import { DEFAULTS } from '../../shared/wire/constants';
import { parseList, preview, type ListKind, type Report } from './lists';
import { plainIssues } from '../../shared/base/plain-issues';
import { dropUnhonoured } from './honoured';
import { systemPromptOf } from './prompt-field';

type OptionalKey = Exclude<keyof typeof agentFieldSchemas, 'name' | 'description'>;

interface ScalarField {
  key: OptionalKey;
  /** What a valid value looks like, for the problem and the fix. */
  expected: string;
  /** What happens when the field is left out. */
  whenAbsent: string;
}

const oneOf = (values: readonly string[]): string => `one of ${values.join(', ')}`;

/** Frontmatter field name → how to check it. Keys are the spelling used in files. */
const SCALAR_FIELDS: Record<string, ScalarField> = {
  context: { key: 'context', expected: '"fork"', whenAbsent: 'the file is a named agent' },
  model: { key: 'model', expected: `a model id such as ${DEFAULTS.model}, or inherit`, whenAbsent: "the caller's model is used" },
  provider: { key: 'provider', expected: 'a provider name of the tree (subAgents.providers, built from FORKFLOW_PROVIDERS) such as anthropic', whenAbsent: "the caller's provider is used" },
  effort: { key: 'effort', expected: oneOf(EFFORT_LEVELS), whenAbsent: 'the default effort applies' },
  permissionMode: { key: 'permissionMode', expected: oneOf(PERMISSION_MODES), whenAbsent: 'the default permission mode applies' },
  maxTurns: { key: 'maxTurns', expected: 'a whole number from 1 to 10000', whenAbsent: 'the default turn limit applies' },
  memory: { key: 'memory', expected: oneOf(MEMORY_SCOPES), whenAbsent: 'the agent has no memory' },
  background: { key: 'background', expected: 'true or false', whenAbsent: 'it runs in the background only when the call asks' },
  isolation: { key: 'isolation', expected: oneOf(ISOLATION_MODES), whenAbsent: "it runs in the caller's directory" },
  delivery: { key: 'delivery', expected: oneOf(DELIVERY_MODES), whenAbsent: "its caller's delivery applies" },
  color: { key: 'color', expected: oneOf(AGENT_COLORS), whenAbsent: 'no colour is shown' },
  initialPrompt: { key: 'initialPrompt', expected: `non-empty text of at most ${MAX_INITIAL_PROMPT_CHARS} characters`, whenAbsent: 'nothing is added to the first turn' },
  contextManagement: {
    key: 'contextManagement',
    expected: 'forkflow, provider, clear-tool-results or off, or a map with strategy (compact, clear-tool-results, off) and optionally by, threshold, keepRecent, keepToolUses, instructions',
    whenAbsent: "the caller's context policy applies",
  },
};

interface ListField {
  key: OptionalKey;
  /** How an unreadable value fails (see lists.ts). */
  kind: ListKind;
}

/** Fields holding lists of names. */
const LIST_FIELDS: Record<string, ListField> = {
  tools: { key: 'tools', kind: 'allow' },
  'allowed-tools': { key: 'allowedTools', kind: 'allow' },
  disallowedTools: { key: 'disallowedTools', kind: 'deny' },
  skills: { key: 'skills', kind: 'skills' },
};

interface StructuredField {
  key: OptionalKey;
  /** What a valid value looks like. */
  expected: string;
  /**
   * A bad value: `ignored` leaves the field out (the agent has fewer tools), `skipped` drops the
   * agent (fails closed: a policy hook or a required server must not silently go missing).
   */
  onBad: 'ignored' | 'skipped';
}

/** Fields holding structured values (bring your own tools: src/shared/tools/). */
const STRUCTURED_FIELDS: Record<string, StructuredField> = {
  mcpServers: { key: 'mcpServers', expected: 'a map of server name to { command, args, env } or { type: http, url, headers }, or a list of such maps and caller server names', onBad: 'ignored' },
  requiredMcpServers: { key: 'requiredMcpServers', expected: 'a list of MCP server names (or prefixes ending in *)', onBad: 'skipped' },
  hooks: { key: 'hooks', expected: 'a map of PreToolUse, PostToolUse, SubagentStart, SubagentStop or Stop to lists of { taskQueue, matcher?, timeout?, onError? }', onBad: 'skipped' },
  routes: { key: 'routes', expected: 'a list of { tools, taskQueue, readOnly?, idempotent?, timeout?, ... } (README "Your own tools")', onBad: 'ignored' },
};

const KNOWN_FIELDS = ['name', 'description', 'prompt', ...Object.keys(SCALAR_FIELDS), ...Object.keys(LIST_FIELDS), ...Object.keys(STRUCTURED_FIELDS)];
const NAME_RULE = 'lowercase letters, digits and hyphens, starting with a letter or digit, at most 64 characters';

/**
 * Builds the definition for one file. `definition` is absent when the file is skipped;
 * `problems` lists everything reported, in field order.
 */
export function buildDefinition(
  file: string,
  data: Record<string, unknown>,
  body: string,
): { definition?: AgentDefinition; problems: AgentProblem[] } {
  const problems: AgentProblem[] = [];
  const report: Report = (p) => problems.push({ file, ...p });

  const name = checkName(data.name, report);
  const description = agentFieldSchemas.description.safeParse(data.description);
  if (!description.success) {
    report({
      field: 'description',
      outcome: 'skipped',
      problem: data.description == null ? 'description is missing' : `description must be non-empty text of at most ${MAX_DESCRIPTION_CHARS} characters, got ${preview(data.description)}`,
      fix: 'Add description: saying when to use this agent; the model reads it to choose one.',
    });
  }
  if (name === undefined || !description.success) return { problems };

  const fields: Record<string, unknown> = {};
  let skip = false;
  for (const [field, value] of Object.entries(data)) {
    // A blank value (`model:`) is the same as leaving the field out.
    if (field === 'name' || field === 'description' || field === 'prompt' || value == null) continue;
    // hasOwn: a field called `constructor` must not find Object.prototype's.
    const scalar = Object.hasOwn(SCALAR_FIELDS, field) ? SCALAR_FIELDS[field] : undefined;
    const list = Object.hasOwn(LIST_FIELDS, field) ? LIST_FIELDS[field] : undefined;
    const structured = Object.hasOwn(STRUCTURED_FIELDS, field) ? STRUCTURED_FIELDS[field] : undefined;
    if (structured) {
      const parsed = agentFieldSchemas[structured.key].safeParse(value);
      if (parsed.success) fields[structured.key] = parsed.data;
      else {
        if (structured.onBad === 'skipped') skip = true;
        report({
          field,
          outcome: structured.onBad,
          problem: `${field} cannot be used (${plainIssues(parsed.error, field).slice(0, 3).join('; ')}); expected ${structured.expected}`,
          fix: structured.onBad === 'skipped' ? `Correct ${field}; until then this agent is not loaded (it must not run without it).` : `Correct ${field}, or delete it (then the agent has only its caller's).`,
        });
      }
    } else if (scalar) {
      const parsed = agentFieldSchemas[scalar.key].safeParse(value);
      if (parsed.success) fields[scalar.key] = parsed.data;
      else
        report({
          field,
          outcome: 'ignored',
          problem: `${field} is ${preview(value)}; expected ${scalar.expected}`,
          fix: `Use ${scalar.expected}, or delete the line (then ${scalar.whenAbsent}).`,
        });
    } else if (list) {
      const names = parseList(field, value, list.kind === 'skills' ? skillNameSchema : toolNameSchema, list.kind, report);
      if (names) fields[list.key] = names;
    } else {
      report({ field, outcome: 'ignored', ...unknownField(field) });
    }
  }

  if (skip || dropUnhonoured(fields, report)) return { problems };
  const systemPrompt = systemPromptOf(data.prompt, body, report);

  // A fork shares its caller's prompt cache, which a different model would break.
  if (fields.context === 'fork' && fields.model !== undefined && fields.model !== INHERIT_MODEL) {
    delete fields.model;
    report({
      field: 'model',
      outcome: 'ignored',
      problem: "a context: fork command always runs on its caller's model (its prompt cache depends on it)",
      fix: 'Delete model:, or remove context: fork to make this a named agent with its own model.',
    });
  }

  const definition = agentDefinitionSchema.parse({ ...fields, name, description: description.data, systemPrompt, sourceFile: file });
  return { definition, problems };
}

function checkName(value: unknown, report: Report): string | undefined {
  const parsed = agentFieldSchemas.name.safeParse(value);
  if (parsed.success) return parsed.data;
  const slug = typeof value === 'string' ? value.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 64) : '';
  report({
    field: 'name',
    outcome: 'skipped',
    problem: value == null ? 'name is missing' : `name ${preview(value)} is not valid: use ${NAME_RULE}`,
    fix: `Set name: to ${slug ? `"${slug}"` : 'a name such as "code-reviewer"'}; the model passes it as subagent_type.`,
  });
  return undefined;
}

function unknownField(field: string): { problem: string; fix: string } {
  const normal = (f: string): string => f.toLowerCase().replace(/[-_]/g, '');
  const match = KNOWN_FIELDS.find((known) => normal(known) === normal(field));
  if (match) return { problem: `unknown field ${field}`, fix: `Rename it to ${match} (fields are case-sensitive).` };
  return { problem: `unknown field ${field}`, fix: `Delete it or correct the spelling; known fields: ${KNOWN_FIELDS.join(', ')}.` };
}
