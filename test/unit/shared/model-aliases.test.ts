/**
 * Claude Code's model aliases in agent definitions (seed 001 S1-08: `model: sonnet`): a tree's
 * provider catalogue maps them (or refuses the spawn by name); a tree without one maps them
 * through the built-in table on Anthropic only (S1-08), elsewhere the agent runs on its caller's model.
 */
import { ANTHROPIC_MODEL_ALIASES, builtinAliasModel, catalogueOf, childProvider, definitionModel, isClaudeCodeAlias } from '../../../src/shared/providers/agent-provider';
import { providersConfigSchema } from '../../../src/shared/providers/providers';

const catalogue = catalogueOf(
  providersConfigSchema.parse([
    { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6', 'claude-haiku-4-5'], aliases: { sonnet: 'claude-sonnet-4-6', haiku: 'claude-haiku-4-5' } },
    { name: 'openai', kind: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', apiKeyEnv: 'K', models: ['gpt-4.1'] },
  ]),
);

test('the three aliases in any case, and nothing else', () => {
  for (const a of ['sonnet', 'Opus', ' HAIKU ']) expect(isClaudeCodeAlias(a)).toBe(true);
  for (const m of ['claude-sonnet-4-6', 'inherit', 'sonnet-4', '', undefined, 42]) expect(isClaudeCodeAlias(m)).toBe(false);
});

test('without a catalogue an alias asks for nothing (the caller\'s model); a model id or inherit is kept as written', () => {
  expect(definitionModel({ model: 'sonnet' })).toBeUndefined();
  expect(definitionModel({ model: 'claude-haiku-4-5' })).toBe('claude-haiku-4-5');
  expect(definitionModel({ model: 'inherit' })).toBe('inherit');
  expect(definitionModel(undefined)).toBeUndefined();
});

test('with a catalogue an alias goes to its provider: mapped where defined, refused by name where not', () => {
  const pick = (model: string, provider?: string) =>
    childProvider({ catalogue, parent: { provider: 'anthropic', model: 'claude-sonnet-4-6' }, fork: false, ...(provider ? { provider } : {}), model: definitionModel({ model }, catalogue[provider ?? 'anthropic']), modelFrom: 'Agent type "x"' });
  expect(pick('haiku')).toEqual({ ok: true, provider: 'anthropic', model: 'claude-haiku-4-5' });
  expect(pick('Haiku')).toEqual({ ok: true, provider: 'anthropic', model: 'claude-haiku-4-5' });
  const opus = pick('opus');
  expect(opus.ok).toBe(false);
  expect(!opus.ok && opus.error).toBe('Agent type "x" asks for model "opus", which is not available on provider "anthropic". Allowed on anthropic: claude-sonnet-4-6, claude-haiku-4-5 (aliases: sonnet, haiku).');
  expect(pick('sonnet', 'openai').ok).toBe(false);
});

test('without a catalogue the built-in table maps the three aliases on Anthropic only (S1-08); ids and other providers are left alone', () => {
  expect(builtinAliasModel('sonnet', 'anthropic')).toBe(ANTHROPIC_MODEL_ALIASES.sonnet);
  expect(builtinAliasModel(' Opus ', 'anthropic')).toBe(ANTHROPIC_MODEL_ALIASES.opus);
  expect(builtinAliasModel('haiku', 'anthropic')).toBe('claude-haiku-4-5');
  // Every alias has an id that is itself no alias (what the allowlist is checked against).
  for (const id of Object.values(ANTHROPIC_MODEL_ALIASES)) expect(isClaudeCodeAlias(id)).toBe(false);
  expect(builtinAliasModel('sonnet', 'openai')).toBeUndefined();
  expect(builtinAliasModel('sonnet', 'bedrock')).toBeUndefined();
  expect(builtinAliasModel('claude-sonnet-4-6', 'anthropic')).toBeUndefined();
  expect(builtinAliasModel('inherit', 'anthropic')).toBeUndefined();
  expect(builtinAliasModel(undefined, 'anthropic')).toBeUndefined();
});
