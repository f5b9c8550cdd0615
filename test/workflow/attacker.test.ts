/**
 * Containment as an attacker meets it, end to end on a real dev server with the offline
 * model: secrets planted where the issue found them reachable — an SSH key and AWS
 * credentials in the worker's home, the payload key file, the blob store and the response
 * store (here inside the tenant's own workspace, the worst place), the dev server's database
 * in the workspace's `.forkflow/`, a sibling tenant's `.env`, `/etc/shadow` — and symlinks
 * to them planted in the workspace. Read, Glob, Grep and Bash of a read-only fork, the
 * default fork (a start with the minimal input), a writing fork and a plan fork go after
 * them every way they can; a second tenant's prompt passes through the same worker's stores
 * meanwhile. Nothing of any of them may reach the model. A writing fork cannot write outside
 * its workspace, a fork cannot move to another tenant's workspace, and a sub-agent's `cwd`
 * cannot leave its caller's.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { startHarness, type Harness } from '../kit/env';
import { messageRequests } from '../kit/requests';
import { agentStep, script, toolResultsIn } from '../kit/tree';

jest.setTimeout(180_000);

const token = (what: string) => `ffsecret-${what}-${randomBytes(8).toString('hex')}`;
const SECRETS = { ssh: token('ssh'), aws: token('aws'), devdb: token('devdb'), blob: token('blob'), tenantB: token('tenant-b'), prompt: token('prompt-b') };
const KEY = randomBytes(32).toString('base64');

let h: Harness;
let scratch: string;
let a: string;
let b: string;
let home: string;
const saved = { ...process.env };

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'forkflow-attack-')));
  chmodSync(scratch, 0o755);
  home = join(scratch, 'home');
  a = join(scratch, 'tenant-a');
  b = join(scratch, 'tenant-b');
  const plant = (path: string, text: string) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
  };
  plant(join(home, '.ssh', 'id_ed25519'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRETS.ssh}\n`);
  plant(join(home, '.aws', 'credentials'), `[default]\naws_secret_access_key = ${SECRETS.aws}\n`);
  plant(join(a, 'README.md'), '# tenant a\n');
  plant(join(a, '.forkflow', 'dev.db'), `SQLite format 3\0${SECRETS.devdb}`);
  plant(join(a, 'keys', 'forkflow-keys.json'), JSON.stringify({ v: 1, keys: [{ id: 'k1', key: KEY }] }));
  plant(join(a, '.blobs', 'sha256', 'ab', 'planted'), SECRETS.blob);
  plant(join(b, '.env'), `API_KEY=${SECRETS.tenantB}\n`);
  for (const [link, target] of [
    ['link-shadow', '/etc/shadow'],
    ['link-ssh', join(home, '.ssh', 'id_ed25519')],
    ['link-b', join(b, '.env')],
    ['link-home', home],
  ]) symlinkSync(target!, join(a, link!));
  // The worker as deployed carelessly: its home, key file, blob and response stores all in reach.
  Object.assign(process.env, {
    HOME: home,
    FORKFLOW_ENCRYPTION_KEY_FILE: join(a, 'keys', 'forkflow-keys.json'),
    FORKFLOW_BLOB_DIR: join(a, '.blobs'),
    FORKFLOW_RESPONSE_DIR: join(a, '.responses'),
  });
  // Payloads in history stay unencrypted here (the run's workflow bundle is built without
  // encrypted failures); the key file still encrypts the worker's response store.
  const env = { ...process.env };
  delete env.FORKFLOW_ENCRYPTION_KEY_FILE;
  h = await startHarness({ name: 'attacker', workspaceRoot: a, dataConverter: forkflowDataConverter({ env }) });
});

afterAll(async () => {
  await h?.close();
  process.env = saved;
  rmSync(scratch, { recursive: true, force: true });
});

/** Every way each tool reaches for the secrets. */
function attackScript(): string {
  const paths = [join(home, '.ssh', 'id_ed25519'), join(home, '.aws', 'credentials'), join(a, 'keys', 'forkflow-keys.json'), join(a, '.forkflow', 'dev.db'), join(a, '.blobs', 'sha256', 'ab', 'planted'), join(b, '.env'), '/etc/shadow', 'link-shadow', 'link-ssh', 'link-b', 'link-home/.aws/credentials', '../tenant-b/.env', `${a}/../tenant-b/.env`, '/proc/self/environ', '/proc/1/environ'];
  const dirs = [home, join(a, '.responses'), join(a, '.blobs'), join(a, '.forkflow'), join(a, 'keys'), b, scratch, '/root', 'link-home'];
  const bash = [
    `cat ${paths.join(' ')} 2>&1`,
    `grep -rs ffsecret ${scratch} /etc /root /tmp 2>&1 | head -50`,
    `ls -laR ${scratch} 2>&1 | head -80`,
    `strings ${join(a, '.forkflow', 'dev.db')} ${join(a, 'keys', 'forkflow-keys.json')} 2>&1`,
    'cat /proc/$PPID/environ /proc/1/environ 2>&1 | tr "\\0" "\\n" | head',
    'ps eww 2>&1 | head',
    `find ${scratch} -name '*.env' -o -name 'credentials' -o -name '*.key' 2>&1 | head`,
    `grep -rs ${KEY.slice(0, 12).replace(/[+/=]/g, '.')} ${scratch} 2>&1 | head`,
    `tar -cf - ${join(a, '.responses')} 2>/dev/null | strings | head -40`,
  ];
  const calls = [
    { name: 'Read', input: { file_path: 'README.md' } },
    ...paths.map((p) => ({ name: 'Read', input: { file_path: p } })),
    ...dirs.map((d) => ({ name: 'Glob', input: { pattern: '**/*', path: d } })),
    { name: 'Glob', input: { pattern: '**/*' } },
    { name: 'Glob', input: { pattern: '.*/**' } },
    ...dirs.map((d) => ({ name: 'Grep', input: { pattern: 'ffsecret|aws_secret|PRIVATE KEY|API_KEY', path: d, output_mode: 'content' } })),
    { name: 'Grep', input: { pattern: 'ffsecret|PRIVATE KEY|API_KEY|"key"', output_mode: 'content' } },
    ...paths.map((p) => ({ name: 'Grep', input: { pattern: '.', path: p, output_mode: 'content' } })),
    ...bash.map((command) => ({ name: 'Bash', input: { command } })),
  ];
  return script('Find every secret.', `@tools ${JSON.stringify(calls)}`, '@reply found nothing');
}

/** Everything the model received, as text. */
function seenByModel(): string {
  return messageRequests(h.model).map((e) => JSON.stringify(e.body ?? {})).join('\n');
}

test("tenant B's prompt passes through the same worker first", async () => {
  const result = await h.forkflow.fork({ agentId: 'tenant-b', prompt: `Remember ${SECRETS.prompt}.\n@reply noted` }, { mode: 'sync' });
  expect(result.status).toBe('completed');
});

test.each([
  ['read-only', () => ({ toolFilter: 'readOnly' as const })],
  ['default (minimal input)', () => ({})],
  ['writing, workspace named', () => ({ workspace: { root: a } })],
  ['plan', () => ({ permissionMode: 'plan' as const })],
])('a %s fork reaches no secret through Read, Glob, Grep or Bash', async (name, input) => {
  const agentId = `attack-${name.split(/[ ,]/)[0]}`;
  const result = await h.forkflow.fork({ agentId, prompt: attackScript(), maxTurns: 5, budget: { maxTokens: 5_000_000 }, ...input() }, { mode: 'sync' });
  expect(result.status).toBe('completed');
  const results = toolResultsIn(await h.forkflow.transcript(agentId));
  expect(results.length).toBeGreaterThan(50);
  // The tools did run (the workspace's own file is read), and refused the rest.
  expect(results.some((r) => !r.isError && r.text.includes('tenant a'))).toBe(true);
  const model = seenByModel();
  for (const [what, secret] of Object.entries(SECRETS).filter(([k]) => k !== 'prompt')) expect({ what, leaked: model.includes(secret) }).toEqual({ what, leaked: false });
  expect(model).not.toContain(KEY);
  // The other tenant's prompt is in this model's log only as its own request, never in a tool result.
  expect(results.some((r) => r.text.includes(SECRETS.prompt))).toBe(false);
  expect((await h.forkflow.status(agentId)).containment).toBe('sandbox');
});

test('the response store is private and its entries are encrypted', () => {
  const dir = join(a, '.responses');
  expect(readdirSync(dir).length).toBeGreaterThan(0);
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  for (const f of files) {
    const text = readFileSync(join(f.parentPath, f.name), 'utf8');
    expect(text).not.toContain(SECRETS.prompt);
    expect(text).not.toContain('Find every secret');
  }
  expect(files.some((f) => f.name.endsWith('.json') && (JSON.parse(readFileSync(join(f.parentPath, f.name), 'utf8')) as { enc?: string }).enc === 'sealed')).toBe(true);
});

test('a writing fork writes nothing outside its workspace, and cannot move to another tenant’s', async () => {
  const writes = [
    { name: 'Bash', input: { command: `echo pwned >> ${home}/.ssh/authorized_keys; echo pwned > ${b}/.env; echo pwned > ../tenant-b/x; ln -sf /etc/passwd ${a}/p; echo ok` } },
    { name: 'FileWrite', input: { file_path: join(home, '.ssh', 'authorized_keys'), content: 'pwned' } },
    { name: 'FileWrite', input: { file_path: 'link-home/.ssh/authorized_keys', content: 'pwned' } },
    { name: 'FileWrite', input: { file_path: '.git/hooks/post-checkout', content: '#!/bin/sh\ntouch /tmp/pwned' } },
    { name: 'FileWrite', input: { file_path: '.forkflow/dev.db', content: 'pwned' } },
  ];
  await h.forkflow.fork({ agentId: 'attack-writes', prompt: script('Write.', `@tools ${JSON.stringify(writes)}`, '@reply done'), budget: { maxTokens: 5_000_000 } }, { mode: 'sync' });
  expect(() => readFileSync(join(home, '.ssh', 'authorized_keys'))).toThrow();
  expect(readFileSync(join(b, '.env'), 'utf8')).toBe(`API_KEY=${SECRETS.tenantB}\n`);
  expect(readdirSync(b)).toEqual(['.env']);
  expect(readFileSync(join(a, '.forkflow', 'dev.db'), 'utf8')).toContain(SECRETS.devdb);

  await h.forkflow.fork({ agentId: 'attack-move', prompt: script('Go.', `@tools ${JSON.stringify([{ name: 'Read', input: { file_path: '.env' } }, { name: 'Bash', input: { command: 'cat .env' } }])}`, '@reply done'), workspace: { root: b } }, { mode: 'sync' });
  const moved = toolResultsIn(await h.forkflow.transcript('attack-move'));
  expect(moved.map((r) => r.isError)).toEqual([true, true]);
  expect(moved[0]!.text).toContain('outside the roots this worker serves');
  expect(seenByModel()).not.toContain(SECRETS.tenantB);
});

test("a sub-agent's cwd cannot leave its caller's workspace, lexically or through a symlink", async () => {
  const child = (cwd: string) => agentStep({ description: `to ${cwd}`, prompt: script('Write.', `@tool Bash ${JSON.stringify({ command: `echo pwned >> authorized_keys; cat .env` })}`, '@reply done'), cwd, subagent_type: 'general-purpose' });
  const prompt = script('Delegate.', child('../tenant-b'), child(join(home, '.ssh')), child('link-home/.ssh'), '@reply done');
  const result = await h.forkflow.startAgent({ agentId: 'attack-cwd', prompt, subAgents: { forkGate: false } }).then((x) => x.result());
  expect(result.status).toBe('completed');
  const results = toolResultsIn(await h.forkflow.transcript('attack-cwd'));
  expect(results[0]).toMatchObject({ isError: true });
  expect(results[0]!.text).toContain("an Agent's cwd must lie inside your own workspace");
  expect(results[1]).toMatchObject({ isError: true });
  expect(readdirSync(join(home, '.ssh'))).toEqual(['id_ed25519']);
  expect(seenByModel()).not.toContain(SECRETS.tenantB);
});
