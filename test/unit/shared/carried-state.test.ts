/**
 * Carried state is parsed, never cast: every state an earlier forkflow wrote (fixtures under
 * test/fixtures/carried-state/) still reads, unversioned states read as v1, and a state that
 * is not one fails with the path of what is wrong.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CARRIED_STATE_VERSION, parseCarriedState } from '../../../src/shared/wire/carried-state';

const DIR = join(__dirname, '..', '..', 'fixtures', 'carried-state');
const fixtures = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

test('fixtures exist for the unversioned shape, v1 (continue-as-new and resume) and v2 (resume by SendMessage and by a client, continue-as-new of a root with its ledger)', () => {
  expect(fixtures).toEqual(expect.arrayContaining(['v0-continue-as-new.json', 'v0-resume.json', 'v1-continue-as-new.json', 'v1-resume.json', 'v2-resume.json', 'v2-client-resume.json', 'v2-continue-as-new.json', 'v2-cache-resume.json', 'v2-context-continue-as-new.json']));
});

test('a v1 state resumed by a message starts a new budget; a v2 one keeps it unless it says otherwise', () => {
  const v1 = parseCarriedState(JSON.parse(readFileSync(join(DIR, 'v1-resume.json'), 'utf8')));
  const v2 = parseCarriedState(JSON.parse(readFileSync(join(DIR, 'v2-resume.json'), 'utf8')));
  if (!v1.ok || !v2.ok) throw new Error('fixtures must parse');
  expect(v1.state.freshBudget).toBeUndefined();
  expect(v2.state.freshBudget).toBe(false);
});

test('a resumed agent carries its cache-break watch: breaks so far and the request its first call is judged against', () => {
  const resumed = parseCarriedState(JSON.parse(readFileSync(join(DIR, 'v2-cache-resume.json'), 'utf8')));
  if (!resumed.ok) throw new Error(resumed.issues.join('; '));
  expect(resumed.state.cache).toMatchObject({ breaks: 0, previous: { messages: 5, ttl: '5m' } });
  expect(resumed.state.cache?.previous?.cached).toBeGreaterThan(0);
});

test('an agent continuing as new after a compaction carries where its context starts, and what compacting cost and saved', () => {
  const can = parseCarriedState(JSON.parse(readFileSync(join(DIR, 'v2-context-continue-as-new.json'), 'utf8')));
  if (!can.ok) throw new Error(can.issues.join('; '));
  const c = can.state.context!;
  expect(c.compactions).toBe(1);
  expect(c.boundaries).toEqual([expect.objectContaining({ at: c.from, by: 'forkflow', reason: 'threshold' })]);
  expect(c.summarising.outputTokens).toBeGreaterThan(0);
  expect(c.measured?.count).toBeGreaterThan(c.from);
  expect(c.saved).toBeGreaterThan(0);
});

test('a root continuing as new carries its tree ledger', () => {
  const can = parseCarriedState(JSON.parse(readFileSync(join(DIR, 'v2-continue-as-new.json'), 'utf8')));
  if (!can.ok) throw new Error(can.issues.join('; '));
  expect(can.state.ledger?.nodes[can.state.ledger.rootId]).toMatchObject({ turns: can.state.turns, usage: can.state.usage });
});

test.each(fixtures)('%s parses with today\'s schema, as the current version, losing nothing', (file) => {
  const raw = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as Record<string, unknown>;
  const parsed = parseCarriedState(raw);
  if (!parsed.ok) throw new Error(`${file}: ${parsed.issues.join('; ')}`);
  expect(parsed.state.v).toBe(CARRIED_STATE_VERSION);
  const { v: _v, ...rest } = parsed.state;
  const { v: _rawV, ...rawRest } = raw;
  expect(JSON.parse(JSON.stringify(rest))).toEqual(rawRest);
});

test('a state that is not one is refused, naming what is wrong', () => {
  const good = JSON.parse(readFileSync(join(DIR, 'v0-resume.json'), 'utf8')) as Record<string, unknown>;
  expect(parseCarriedState(undefined)).toMatchObject({ ok: false });
  const negative = parseCarriedState({ ...good, turns: -1 });
  expect(negative).toEqual({ ok: false, issues: [expect.stringContaining('turns') as string] });
  const future = parseCarriedState({ ...good, v: CARRIED_STATE_VERSION + 1 });
  expect(future).toEqual({ ok: false, issues: [expect.stringContaining('v') as string] });
  const badChild = parseCarriedState({ ...good, children: [{ agentId: 'x', kind: 'robot' }] });
  expect(badChild.ok).toBe(false);
  if (!badChild.ok) expect(badChild.issues.join(' ')).toContain('children.0.kind');
});
