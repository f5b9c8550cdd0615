/**
 * Providers as configuration: FORKFLOW_PROVIDERS / FORKFLOW_PROVIDERS_FILE parsed and
 * refused with messages that name the setting, the default that is today's one Anthropic
 * client (the very same object), and model resolution per provider (aliases, defaults,
 * `inherit`, a model of another provider, an alias with no mapping).
 */
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { DEFAULT_PROVIDERS, resolveModel } from '../../../src/shared/providers/providers';
import { createProviderClients, InvalidProvidersError, providersFileProblem, providersFromEnv } from '../../../src/worker/providers';

const CONFIG = [
  { name: 'anthropic', kind: 'anthropic', models: ['claude-sonnet-4-6', 'claude-haiku-4-5'], aliases: { sonnet: 'claude-sonnet-4-6', haiku: 'claude-haiku-4-5' } },
  { name: 'openai', kind: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv: 'OAI_KEY', models: ['gpt-4.1-mini', 'gpt-4.1'], aliases: { mini: 'gpt-4.1-mini' } },
  { name: 'gemini', kind: 'openai-compatible', baseURL: 'https://generativelanguage.googleapis.com/v1beta/openai', apiKeyEnv: 'GEMINI_API_KEY', models: ['gemini-2.5-flash'] },
];

describe('provider configuration', () => {
  it('is today\'s single Anthropic client when nothing is configured', () => {
    expect(providersFromEnv({})).toBe(DEFAULT_PROVIDERS);
    const own = new Anthropic({ apiKey: 'k', maxRetries: 0 });
    const clients = createProviderClients(providersFromEnv({}), own, {});
    expect([...clients.keys()]).toEqual(['anthropic']);
    const only = clients.get('anthropic');
    expect(only?.kind === 'anthropic' && only.anthropic).toBe(own);
  });

  it('reads JSON inline or from a file, and builds one client per entry', () => {
    const inline = providersFromEnv({ FORKFLOW_PROVIDERS: JSON.stringify(CONFIG) });
    const dir = mkdtempSync(join(tmpdir(), 'providers-'));
    writeFileSync(join(dir, 'p.json'), JSON.stringify(CONFIG), { mode: 0o600 });
    expect(providersFromEnv({ FORKFLOW_PROVIDERS_FILE: join(dir, 'p.json') })).toEqual(inline);
    expect(inline[2]?.aliases).toEqual({});
    const clients = createProviderClients(inline, new Anthropic({ apiKey: 'k' }), { OAI_KEY: 'a', GEMINI_API_KEY: 'g' });
    const gemini = clients.get('gemini');
    expect(gemini?.kind).toBe('openai-compatible');
    expect(gemini?.kind === 'openai-compatible' && gemini.openai).toBeInstanceOf(OpenAI);
    expect(gemini?.kind === 'openai-compatible' && gemini.openai.baseURL).toBe('https://generativelanguage.googleapis.com/v1beta/openai');
    expect(gemini?.kind === 'openai-compatible' && gemini.openai.maxRetries).toBe(0);
  });

  it('with a gateway: every client goes through it, each named entry at its own path with the URL its configuration gives it', () => {
    const own = new Anthropic({ apiKey: 'k', baseURL: 'http://gw:8787' });
    const config = providersFromEnv({
      FORKFLOW_PROVIDERS: JSON.stringify([
        { name: 'anthropic', kind: 'anthropic' },
        { name: 'team', kind: 'anthropic', apiKeyEnv: 'TEAM_KEY' },
        { name: 'proxy', kind: 'anthropic', baseURL: 'https://llm.example.com/anthropic', apiKeyEnv: 'TEAM_KEY' },
        { name: 'openai', kind: 'openai-compatible', baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OAI_KEY' },
      ]),
    });
    const clients = createProviderClients(config, own, { OAI_KEY: 'a', TEAM_KEY: 't' }, { gateway: 'http://gw:8787/' });
    expect([...clients.values()].every((c) => c.viaGateway === true)).toBe(true);
    const base = (name: string) => {
      const c = clients.get(name)!;
      return c.kind === 'openai-compatible' ? c.openai.baseURL : c.anthropic.baseURL;
    };
    expect(clients.get('anthropic')?.kind === 'anthropic' && clients.get('anthropic')).toMatchObject({ anthropic: own });
    // An entry without a URL is the default upstream's; one with a URL is the gateway's provider path.
    expect(base('team')).toBe('http://gw:8787/');
    expect(base('proxy')).toBe('http://gw:8787/forkflow/v1/providers/proxy');
    expect(base('openai')).toBe('http://gw:8787/forkflow/v1/providers/openai');
    // Without a gateway: straight to the provider, as before.
    const direct = createProviderClients(config, own, { OAI_KEY: 'a', TEAM_KEY: 't' });
    expect(direct.get('openai')?.kind === 'openai-compatible' && direct.get('openai')).toMatchObject({ openai: { baseURL: 'https://api.openai.com/v1' } });
    expect(direct.get('openai')?.viaGateway).toBeUndefined();
  });

  it.each([
    [{ FORKFLOW_PROVIDERS: '[', FORKFLOW_PROVIDERS_FILE: '/x' }, 'not both'],
    [{ FORKFLOW_PROVIDERS: '{' }, 'FORKFLOW_PROVIDERS is not valid JSON'],
    [{ FORKFLOW_PROVIDERS: '[]' }, 'FORKFLOW_PROVIDERS is not a valid provider list'],
    [{ FORKFLOW_PROVIDERS: JSON.stringify([CONFIG[0], CONFIG[0]]) }, 'unique'],
    [{ FORKFLOW_PROVIDERS: JSON.stringify([{ name: 'x', kind: 'gemini-sdk' }]) }, 'kind'],
    [{ FORKFLOW_PROVIDERS: JSON.stringify([{ name: 'x', kind: 'anthropic', apiKey: 'sk-secret' }]) }, 'apiKey'],
    [{ FORKFLOW_PROVIDERS: JSON.stringify([{ name: 'x', kind: 'anthropic', models: ['a'], aliases: { b: 'c' } }]) }, 'every alias must map'],
    [{ FORKFLOW_PROVIDERS_FILE: '/nonexistent/providers.json' }, 'cannot be read'],
  ])('refuses %j', (env, message) => {
    expect(() => providersFromEnv(env)).toThrow(InvalidProvidersError);
    expect(() => providersFromEnv(env)).toThrow(message);
  });

  it('refuses a providers file others could have written: group- or world-writable, another user\'s, not a regular file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'providers-'));
    const file = join(dir, 'p.json');
    writeFileSync(file, JSON.stringify(CONFIG), { mode: 0o600 });
    for (const mode of [0o664, 0o646, 0o666]) {
      chmodSync(file, mode);
      expect(() => providersFromEnv({ FORKFLOW_PROVIDERS_FILE: file })).toThrow(InvalidProvidersError);
      expect(() => providersFromEnv({ FORKFLOW_PROVIDERS_FILE: file })).toThrow(`has mode 0${mode.toString(8)}: group or others may write it`);
    }
    // Readable by others is fine: the file holds no keys.
    chmodSync(file, 0o644);
    expect(providersFromEnv({ FORKFLOW_PROVIDERS_FILE: file })).toHaveLength(3);
    chmodSync(file, 0o600);
    expect(providersFromEnv({ FORKFLOW_PROVIDERS_FILE: file })).toHaveLength(3);
    // Owned by someone else: the same file seen by another user (root's files are accepted).
    const st = statSync(file);
    const owned = (uid: number) => ({ uid, mode: st.mode, isFile: () => true });
    expect(providersFileProblem(file, owned(4242), 1000)).toContain("belongs to uid 4242, not to this process's user (uid 1000) or root");
    expect(providersFileProblem(file, owned(0), 1000)).toBeUndefined();
    expect(providersFileProblem(file, owned(1000), 1000)).toBeUndefined();
    expect(providersFileProblem(file, st, st.uid)).toBeUndefined();
    const sub = join(dir, 'sub');
    mkdirSync(sub, { mode: 0o700 });
    expect(() => providersFromEnv({ FORKFLOW_PROVIDERS_FILE: sub })).toThrow('is not a regular file');
  });

  it('refuses clients it cannot build: a missing key, an OpenAI-compatible entry without a base URL', () => {
    const config = providersFromEnv({ FORKFLOW_PROVIDERS: JSON.stringify(CONFIG) });
    expect(() => createProviderClients(config, new Anthropic({ apiKey: 'k' }), { OAI_KEY: 'a' })).toThrow('GEMINI_API_KEY is not set');
    const noUrl = providersFromEnv({ FORKFLOW_PROVIDERS: JSON.stringify([{ name: 'v', kind: 'openai-compatible', apiKeyEnv: 'K' }]) });
    expect(() => createProviderClients(noUrl, new Anthropic({ apiKey: 'k' }), { K: 'a' })).toThrow('needs baseURL');
  });
});

describe('resolveModel', () => {
  const config = providersFromEnv({ FORKFLOW_PROVIDERS: JSON.stringify(CONFIG) });
  const ok = (provider: string, model?: string, inherited?: { provider: string; model: string }) => {
    const r = resolveModel(config, provider, model, inherited);
    return r.ok ? r.model : r.error;
  };

  it('resolves ids, aliases per provider, the default and inherit', () => {
    expect(ok('openai', 'gpt-4.1')).toBe('gpt-4.1');
    expect(ok('openai', 'mini')).toBe('gpt-4.1-mini');
    expect(ok('anthropic', 'haiku')).toBe('claude-haiku-4-5');
    expect(ok('openai')).toBe('gpt-4.1-mini');
    expect(ok('openai', 'inherit', { provider: 'anthropic', model: 'claude-sonnet-4-6' })).toBe('gpt-4.1-mini');
    expect(ok('anthropic', 'inherit', { provider: 'anthropic', model: 'claude-haiku-4-5' })).toBe('claude-haiku-4-5');
  });

  it('refuses an unknown provider, a model of another provider and an alias with no mapping here', () => {
    expect(ok('mistral', 'x')).toBe('Unknown provider "mistral". Configured providers: anthropic, openai, gemini.');
    expect(ok('openai', 'claude-sonnet-4-6')).toContain('It is configured for anthropic, not for openai.');
    expect(ok('gemini', 'mini')).toContain('It is configured for openai, not for gemini.');
    expect(ok('gemini', 'sonnet')).toContain('Allowed: gemini-2.5-flash');
  });
});
