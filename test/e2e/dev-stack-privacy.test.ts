/**
 * `forkflow dev` with encryption keys keeps what it is given to itself (issue 42, finding 5).
 * A dev stack started as `forkflow dev` starts it, with keys and a database in a project
 * folder others may enter (`.forkflow/`, 0755), checked as another local user would look:
 * the codec server's token is not in the dev server's command line (`/proc/<pid>/cmdline`,
 * what `ps` shows) nor in the settings the Web UI serves to anyone who loads it; the
 * database is the worker user's alone, and a second UNIX user cannot read it. On the old
 * code the token was in both, and `dev.db` was 0644.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { forkflowDataConverter } from '../../src/payloads/data-converter';
import { startDevStack, type DevStack } from '../../src/testing/dev-stack';
import { tempDir } from '../kit/env';
import { otherUser, type OtherUser } from '../kit/other-user';

jest.setTimeout(300_000);

const dataConverter = forkflowDataConverter({ env: { ...process.env, FORKFLOW_ENCRYPTION_KEYS: `dev-${randomBytes(4).toString('hex')}:${randomBytes(32).toString('base64')}` } });
let project: string;
let dbFile: string;
let stack: DevStack;
let neighbour: OtherUser;

beforeAll(async () => {
  neighbour = otherUser();
  project = tempDir('dev-project');
  chmodSync(project, 0o755);
  // As the CLI makes it (mkdir -p): a folder others may enter.
  mkdirSync(join(project, '.forkflow'), { mode: 0o755 });
  dbFile = join(project, '.forkflow', 'dev.db');
  const workspace = join(project, 'ws');
  mkdirSync(workspace);
  stack = await startDevStack({ server: { dbFile, logLevel: 'error' }, workspaceRoot: workspace, offlineModel: {}, dataConverter });
});

afterAll(async () => {
  await stack?.stop();
  neighbour?.remove();
});

/** The command line of the dev server (the process whose arguments name the database). */
function devServerCmdline(): string {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes('start-dev') && cmdline.includes(dbFile)) return cmdline;
    } catch {
      // gone
    }
  }
  throw new Error('no dev server process found');
}

test('the codec token is neither in the dev server\'s command line nor in the Web UI\'s settings; the UI can still be pointed at it', async () => {
  const codec = stack.codecServer!;
  const token = /\/t\/([^/]+)/.exec(codec.endpoint)![1]!;
  expect(token.length).toBeGreaterThanOrEqual(16);
  expect(devServerCmdline()).not.toContain(token);
  const settings = await (await fetch(`${stack.server.uiUrl}/api/v1/settings`)).text();
  expect(settings).toContain('"Codec"');
  expect(settings).not.toContain(token);
  // The endpoint a user pastes into the UI's settings decodes (the codec server answers it).
  const answer = await fetch(`${codec.endpoint}/decode`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payloads: [] }) });
  expect(answer.status).toBe(200);
});

test('the database is the worker user\'s alone: a second UNIX user cannot read it', () => {
  const mode = statSync(dbFile).mode & 0o777;
  expect(mode.toString(8)).toBe('600');
  const read = neighbour.run(`head -c 16 ${dbFile}`);
  expect(read.status).not.toBe(0);
  expect(read.stderr).toMatch(/Permission denied/);
  expect(read.stdout).not.toContain('SQLite');
});
