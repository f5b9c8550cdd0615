/**
 * Opening a named agent's memory directory on the worker, against a real filesystem: made if
 * missing, its index read with bounds, and nothing followed out of the workspace (a planted
 * link, a FIFO, a link for an index), nothing made outside it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentMemoryError, isFileIn, openAgentMemory } from '../../../src/activities/agent-memory';
import { createIsolationActivities } from '../../../src/activities/isolation';
import { userMemoryDir } from '../../../src/activities/user-memory';
import { MEMORY_INDEX_BYTES, MEMORY_INDEX_LINES } from '../../../src/shared/agents/agent-memory';

const fresh = (name: string) => realpathSync(mkdtempSync(path.join(tmpdir(), `forkflow-mem-${name}-`)));
const project = { scope: 'project' as const, agent: 'notes' };
const local = { scope: 'local' as const, agent: 'notes' };
const none = { protectedPaths: [], hidden: [] };

describe('openAgentMemory', () => {
  it('makes the directory where the scope keeps it, and reads no index on a first run', async () => {
    const root = fresh('first');
    const found = await openAgentMemory(root, project, none);
    expect(found).toEqual({ dir: path.join(root, '.claude/agent-memory/notes'), truncated: false });
    expect(existsSync(found.dir)).toBe(true);
    const other = await openAgentMemory(root, local, none);
    expect(other.dir).toBe(path.join(root, '.claude/agent-memory-local/notes'));
  });

  it('reads the index, whole when short', async () => {
    const root = fresh('index');
    mkdirSync(path.join(root, '.claude/agent-memory/notes'), { recursive: true });
    writeFileSync(path.join(root, '.claude/agent-memory/notes/MEMORY.md'), '- tests: npm test\n- style: see STYLE.md\n\n');
    expect(await openAgentMemory(root, project, none)).toMatchObject({ index: '- tests: npm test\n- style: see STYLE.md', truncated: false });
  });

  it(`keeps ${MEMORY_INDEX_LINES} lines and ${MEMORY_INDEX_BYTES} bytes at most, in whole lines`, async () => {
    const root = fresh('long');
    const dir = path.join(root, '.claude/agent-memory/notes');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'MEMORY.md'), Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n'));
    const many = await openAgentMemory(root, project, none);
    expect(many.truncated).toBe(true);
    expect(many.index!.split('\n')).toHaveLength(MEMORY_INDEX_LINES);
    expect(many.index!.split('\n').at(-1)).toBe(`line ${MEMORY_INDEX_LINES - 1}`);

    // 300 lines of 100 three-byte characters (301 bytes a line): the byte bound comes first and
    // falls inside a character of line 84; that line is dropped whole, no partial character kept.
    writeFileSync(path.join(dir, 'MEMORY.md'), Array.from({ length: 300 }, () => '€'.repeat(100)).join('\n'));
    expect(MEMORY_INDEX_BYTES % 301 % 3).not.toBe(0);
    const wide = await openAgentMemory(root, project, none);
    expect(wide.truncated).toBe(true);
    expect(wide.index!.split('\n')).toHaveLength(Math.floor(MEMORY_INDEX_BYTES / 301));
    for (const line of wide.index!.split('\n')) expect(line).toBe('€'.repeat(100));

    // One line longer than the bound: kept up to the bound, without a cut character.
    writeFileSync(path.join(dir, 'MEMORY.md'), '€'.repeat(MEMORY_INDEX_BYTES));
    const one = await openAgentMemory(root, project, none);
    expect(one).toMatchObject({ truncated: true, index: '€'.repeat(Math.floor(MEMORY_INDEX_BYTES / 3)) });

    // Exactly the line bound, newline at the end and blank lines after: whole, not cut.
    writeFileSync(path.join(dir, 'MEMORY.md'), `${Array.from({ length: MEMORY_INDEX_LINES }, (_, i) => `line ${i}`).join('\n')}\n\n\n`);
    const exact = await openAgentMemory(root, project, none);
    expect(exact.truncated).toBe(false);
    expect(exact.index!.split('\n')).toHaveLength(MEMORY_INDEX_LINES);
  });

  it('refuses a planted link out of the workspace, and makes nothing there', async () => {
    const root = fresh('link');
    const outside = fresh('outside');
    mkdirSync(path.join(root, '.claude'));
    symlinkSync(outside, path.join(root, '.claude/agent-memory'));
    await expect(openAgentMemory(root, project, none)).rejects.toThrow(AgentMemoryError);
    await expect(openAgentMemory(root, project, none)).rejects.toThrow(/outside its workspace/);
    expect(readdirSync(outside)).toEqual([]);
    // A link to the whole .claude folder elsewhere: refused at the first level.
    const root2 = fresh('link2');
    symlinkSync(outside, path.join(root2, '.claude'));
    await expect(openAgentMemory(root2, local, none)).rejects.toThrow(/outside its workspace/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('follows a link that stays inside the workspace', async () => {
    const root = fresh('inner');
    mkdirSync(path.join(root, 'shared-notes'));
    mkdirSync(path.join(root, '.claude'));
    symlinkSync(path.join(root, 'shared-notes'), path.join(root, '.claude/agent-memory'));
    const found = await openAgentMemory(root, project, none);
    expect(found.dir).toBe(path.join(root, 'shared-notes/notes'));
  });

  it("refuses a link into forkflow's own .forkflow/ state (hidden from every agent), and a dangling or looping link, by name", async () => {
    const root = fresh('hidden');
    mkdirSync(path.join(root, '.forkflow/worktrees/other/.claude/agent-memory/notes'), { recursive: true });
    writeFileSync(path.join(root, '.forkflow/worktrees/other/.claude/agent-memory/notes/MEMORY.md'), "another agent's notes");
    symlinkSync(path.join(root, '.forkflow/worktrees/other/.claude'), path.join(root, '.claude'));
    await expect(openAgentMemory(root, project, { protectedPaths: [], hidden: [path.join(root, '.forkflow')] })).rejects.toThrow(/in forkflow's own state/);

    const dangling = fresh('dangling');
    symlinkSync(path.join(dangling, 'nowhere'), path.join(dangling, '.claude'));
    await expect(openAgentMemory(dangling, project, none)).rejects.toThrow(/a link on the way leads nowhere \(ENOENT\)/);
    const looping = fresh('looping');
    symlinkSync(path.join(looping, '.claude'), path.join(looping, '.claude'));
    await expect(openAgentMemory(looping, project, none)).rejects.toThrow(AgentMemoryError);
  });

  it("refuses the worker's protected state", async () => {
    const root = fresh('protected');
    const state = path.join(root, '.claude/agent-memory-local');
    mkdirSync(state, { recursive: true });
    await expect(openAgentMemory(root, local, { protectedPaths: [state], hidden: [] })).rejects.toThrow(/protected state/);
    expect(existsSync(path.join(state, 'notes'))).toBe(false);
  });

  it('refuses an index that is a link (to a key, say) or a FIFO, without reading or waiting', async () => {
    const root = fresh('index-link');
    const dir = path.join(root, '.claude/agent-memory/notes');
    mkdirSync(dir, { recursive: true });
    const secret = path.join(fresh('secret'), 'key');
    writeFileSync(secret, 'SECRET-KEY');
    symlinkSync(secret, path.join(dir, 'MEMORY.md'));
    await expect(openAgentMemory(root, project, none)).rejects.toThrow(/symbolic link/);

    const root2 = fresh('fifo');
    const dir2 = path.join(root2, '.claude/agent-memory/notes');
    mkdirSync(dir2, { recursive: true });
    execFileSync('mkfifo', [path.join(dir2, 'MEMORY.md')]);
    await expect(openAgentMemory(root2, project, none)).rejects.toThrow(/not a plain file/);
  });

  it('refuses a level that is a file', async () => {
    const root = fresh('file');
    mkdirSync(path.join(root, '.claude'));
    writeFileSync(path.join(root, '.claude/agent-memory'), 'not a directory');
    await expect(openAgentMemory(root, project, none)).rejects.toThrow(/is not a directory/);
  });
});

describe('isFileIn (the index read is the file its name resolves to inside the directory)', () => {
  it('holds for the file itself, not for another file, nor for one that resolves outside', async () => {
    const root = fresh('same');
    const dir = path.join(root, 'm');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'MEMORY.md'), 'inside');
    const inside = statSync(path.join(dir, 'MEMORY.md'));
    expect(await isFileIn(inside, path.join(dir, 'MEMORY.md'), dir)).toBe(true);

    // What a racing writer makes happen: the handle is on a file elsewhere.
    const elsewhere = path.join(fresh('elsewhere'), 'MEMORY.md');
    writeFileSync(elsewhere, 'another tenant');
    expect(await isFileIn(statSync(elsewhere), path.join(dir, 'MEMORY.md'), dir)).toBe(false);
    // The name now resolves out of the directory (a level swapped for a link).
    const swapped = path.join(root, 'swapped');
    symlinkSync(path.dirname(elsewhere), swapped);
    expect(await isFileIn(statSync(elsewhere), path.join(swapped, 'MEMORY.md'), dir)).toBe(false);
    expect(await isFileIn(inside, path.join(dir, 'gone.md'), dir)).toBe(false);
  });
});

describe('the openAgentMemory activity', () => {
  it('checks the memory it is given, whoever scheduled it: a name that is a path is refused, nothing made', async () => {
    const root = fresh('activity');
    const activities = createIsolationActivities({ workspaceRoot: root });
    const activity = (input: Parameters<typeof activities.openAgentMemory>[0]) => activities.openAgentMemory(input);
    await expect(activity({ memory: { scope: 'project', agent: '../../escape' } })).rejects.toMatchObject({ type: 'AgentMemoryUnavailable', nonRetryable: true, message: expect.stringMatching(/^Invalid agent memory: agent: /) as string });
    await expect(activity({ memory: { scope: 'user', agent: 'notes' } as never })).rejects.toMatchObject({ type: 'AgentMemoryUnavailable' });
    expect(readdirSync(root)).toEqual([]);
    await expect(activity({ memory: project })).resolves.toMatchObject({ dir: path.join(root, '.claude/agent-memory/notes') });
  });
});

describe('a user memory (S1-38): in the tenant\'s home under the worker\'s FORKFLOW_USER_MEMORY_ROOT', () => {
  const alice = { scope: 'user' as const, agent: 'notes', tenant: 'alice' };

  it('is made in the home the operator made for the tenant, outside any workspace, and found again by its tools', async () => {
    const homes = fresh('homes');
    mkdirSync(path.join(homes, 'alice'));
    writeFileSync(path.join(homes, 'alice', 'keep.txt'), '');
    const activities = createIsolationActivities({ workspaceRoot: fresh('ws'), userMemoryRoot: homes });
    const found = await activities.openAgentMemory({ memory: alice });
    expect(found).toEqual({ dir: path.join(homes, 'alice/.claude/agent-memory/notes'), truncated: false });
    expect(await userMemoryDir(homes, { tenant: 'alice', agent: 'notes' })).toBe(found.dir);
  });

  it('is refused by name without a root, for a tenant the operator made no home for, and for a home that leads out of the root; nothing is made', async () => {
    const homes = fresh('homes-bad');
    const outside = fresh('outside');
    symlinkSync(outside, path.join(homes, 'mallory'));
    const without = createIsolationActivities({ workspaceRoot: fresh('ws2') });
    await expect(without.openAgentMemory({ memory: alice })).rejects.toMatchObject({ type: 'AgentMemoryUnavailable', message: expect.stringContaining('FORKFLOW_USER_MEMORY_ROOT') as string });
    const activities = createIsolationActivities({ workspaceRoot: fresh('ws3'), userMemoryRoot: homes });
    await expect(activities.openAgentMemory({ memory: { ...alice, tenant: 'bob' } })).rejects.toMatchObject({ message: expect.stringContaining('There is no home for tenant "bob"') as string });
    await expect(activities.openAgentMemory({ memory: { ...alice, tenant: 'mallory' } })).rejects.toMatchObject({ message: expect.stringContaining('outside the user-memory root') as string });
    await expect(activities.openAgentMemory({ memory: { ...alice, tenant: '../x' } })).rejects.toMatchObject({ message: expect.stringMatching(/^Invalid agent memory: tenant: /) as string });
    expect(readdirSync(homes)).toEqual(['mallory']);
    expect(readdirSync(outside)).toEqual([]);
    await expect(userMemoryDir(homes, { tenant: 'bob', agent: 'notes' })).rejects.toThrow(AgentMemoryError);
  });
});

test('a user-memory root inside a workspace the worker serves is refused: its forks could write every tenant\'s memory', async () => {
  const ws = fresh('ws-homes');
  mkdirSync(path.join(ws, 'homes', 'alice'), { recursive: true });
  const activities = createIsolationActivities({ workspaceRoot: ws, userMemoryRoot: path.join(ws, 'homes') });
  await expect(activities.openAgentMemory({ memory: { scope: 'user', agent: 'notes', tenant: 'alice' } })).rejects.toMatchObject({ message: expect.stringContaining('lies in the workspace root') as string });
  expect(readdirSync(path.join(ws, 'homes', 'alice'))).toEqual([]);
});
