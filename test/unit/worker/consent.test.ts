/**
 * The operator's consent as the worker reads it (src/worker/consent.ts) and decides with it
 * (src/activities/mcp/consent.ts): rules in the operator's syntax, the matching rule for stdio
 * MCP commands (program by canonical path, arguments by pattern, env names, cwd), agent
 * directories (their servers start as written; never a directory forks can write), bypass.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_CONSENT } from '../../../src/activities/consent';
import { mcpLaunchDecision, resolveProgram } from '../../../src/activities/mcp/consent';
import { InvalidConsentError, operatorConsent, parseMcpCommandRule } from '../../../src/worker/consent';

let dir: string;
let bin: string;
let server: string;
let workspace: string;

beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'forkflow-consent-unit-')));
  bin = join(dir, 'bin');
  workspace = join(dir, 'ws');
  mkdirSync(bin);
  mkdirSync(workspace);
  server = join(bin, 'mcp-docs');
  writeFileSync(server, '#!/bin/sh\nexit 0\n');
  chmodSync(server, 0o755);
  symlinkSync(server, join(bin, 'docs-alias'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ PATH: `${bin}:/usr/bin:/bin` });
const consentOf = (...rules: string[]) => ({ ...NO_CONSENT, mcpCommands: rules.map(parseMcpCommandRule) });

describe('parseMcpCommandRule', () => {
  test('options, then the program, then argument patterns; `...` ends a rule that lets more follow', () => {
    expect(parseMcpCommandRule('env:GITHUB_TOKEN env:MCP_* cwd:/srv/* /usr/bin/node /opt/mcp/gh.js --flag=* ...')).toEqual({
      command: '/usr/bin/node',
      args: ['/opt/mcp/gh.js', '--flag=*'],
      moreArgs: true,
      env: ['GITHUB_TOKEN', 'MCP_*'],
      cwd: ['/srv/*'],
      text: 'env:GITHUB_TOKEN env:MCP_* cwd:/srv/* /usr/bin/node /opt/mcp/gh.js --flag=* ...',
    });
    expect(parseMcpCommandRule('["/opt/mcp/bin/docs", "--root", "/srv/my docs"]')).toMatchObject({ command: '/opt/mcp/bin/docs', args: ['--root', '/srv/my docs'], moreArgs: false });
  });

  test('a rule without an absolute program, with a bad option, or with `...` inside is refused with what is wrong', () => {
    expect(() => parseMcpCommandRule('node server.js')).toThrow('is neither an option (env:NAME, cwd:/dir) nor the program\'s absolute path');
    expect(() => parseMcpCommandRule('env:BAD-NAME /usr/bin/node')).toThrow(InvalidConsentError);
    expect(() => parseMcpCommandRule('env:X')).toThrow('names no program');
    expect(() => parseMcpCommandRule('/usr/bin/node ... x')).toThrow('"..." may only end a rule');
    expect(() => parseMcpCommandRule('[1, 2]')).toThrow('JSON array of strings');
  });
});

describe('mcpLaunchDecision', () => {
  test('nothing is allowed by default: the refusal names the settings and the rule that would allow it', async () => {
    const d = await mcpLaunchDecision('evil', { command: 'sh', args: ['-c', 'id'] }, NO_CONSENT, env());
    expect(d.ok).toBe(false);
    const message = (d as { message: string }).message;
    expect(message).toContain('allows no stdio MCP command');
    expect(message).toContain('FORKFLOW_MCP_COMMANDS');
    expect(message).toContain('FORKFLOW_AGENT_DIRS');
    expect(message).toMatch(/adds "\/(usr\/)?bin\/sh -c id"/);
  });

  test('the program by canonical path (a bare name found on PATH, an alias), started by the path that matched', async () => {
    const consent = consentOf(`${server} --root *`);
    expect(await mcpLaunchDecision('docs', { command: 'mcp-docs', args: ['--root', '/srv'] }, consent, env())).toEqual({ ok: true, command: server, by: `rule "${server} --root *"` });
    expect(await mcpLaunchDecision('docs', { command: join(bin, 'docs-alias'), args: ['--root', '/srv'] }, consent, env())).toMatchObject({ ok: true, command: join(bin, 'docs-alias') });
    expect(resolveProgram('./mcp-docs', env())).toBeUndefined();
    expect((await mcpLaunchDecision('docs', { command: '/bin/sh', args: ['--root', '/srv'] }, consent, env())).ok).toBe(false);
  });

  test('arguments: one pattern each, `*` any one, `prefix*`, and more only after `...`', async () => {
    const exact = consentOf(`${server} --root *`);
    const more = consentOf(`${server} --root /srv* ...`);
    const ask = (c: typeof exact, args: string[]) => mcpLaunchDecision('docs', { command: server, args }, c, env()).then((d) => d.ok);
    expect(await ask(exact, ['--root'])).toBe(false);
    expect(await ask(exact, ['--root', '/a', '--eval=x'])).toBe(false);
    expect(await ask(more, ['--root', '/srv/a', '--verbose'])).toBe(true);
    expect(await ask(more, ['--root', '/etc'])).toBe(false);
    const refused = await mcpLaunchDecision('docs', { command: server, args: ['--root', '/a', '--eval=x'] }, exact, env());
    expect((refused as { message: string }).message).toContain(`"${server} --root *" allows that program, but not other arguments`);
  });

  test('env names and a cwd only when the rule names them: a start input cannot set NODE_OPTIONS or LD_PRELOAD', async () => {
    const consent = consentOf(`env:DOCS_* cwd:${dir}/* ${server}`);
    const ask = (extra: object) => mcpLaunchDecision('docs', { command: server, ...extra }, consent, env());
    expect((await ask({ env: { DOCS_TOKEN: 't' }, cwd: workspace })).ok).toBe(true);
    const preload = await ask({ env: { LD_PRELOAD: '/tmp/x.so' } });
    expect((preload as { message: string }).message).toContain('but not environment LD_PRELOAD');
    expect((await ask({ cwd: '/etc' })).ok).toBe(false);
  });

  test('a server declared in an agent definition of the operator\'s directories starts as written there, and only so', async () => {
    const declared = { command: 'mcp-docs', args: ['--root', '${MCP_ROOT:-/srv}'] };
    const consent = { ...NO_CONSENT, agentServers: () => Promise.resolve([declared]) };
    expect(await mcpLaunchDecision('docs', { ...declared }, consent, env())).toMatchObject({ ok: true, command: 'mcp-docs' });
    expect((await mcpLaunchDecision('docs', { ...declared, args: ['--root', '/'] }, consent, env())).ok).toBe(false);
    expect((await mcpLaunchDecision('docs', { ...declared, env: { NODE_OPTIONS: '--require /x' } }, consent, env())).ok).toBe(false);
  });
});

describe('operatorConsent', () => {
  test('nothing unless the operator says so; flags add to the environment', () => {
    expect(operatorConsent({}, [workspace], {})).toEqual({ mcpCommands: [], allowBypassPermissions: false });
    const c = operatorConsent({ mcpCommands: [`${server} ...`], allowBypassPermissions: true }, [workspace], { FORKFLOW_MCP_COMMANDS: `${server} a;\n${server} b` });
    expect(c.mcpCommands.map((r) => r.text)).toEqual([`${server} a`, `${server} b`, `${server} ...`]);
    expect(c.allowBypassPermissions).toBe(true);
    expect(operatorConsent({}, [workspace], { FORKFLOW_ALLOW_BYPASS_PERMISSIONS: '1' }).allowBypassPermissions).toBe(true);
    expect(() => operatorConsent({}, [workspace], { FORKFLOW_ALLOW_BYPASS_PERMISSIONS: 'yes' })).toThrow('FORKFLOW_ALLOW_BYPASS_PERMISSIONS must be 1 or 0');
  });

  test('a program or agent directory a fork could write is refused at start, saying why', () => {
    const planted = join(workspace, 'tool');
    writeFileSync(planted, '#!/bin/sh\n');
    chmodSync(planted, 0o755);
    expect(() => operatorConsent({ mcpCommands: [planted] }, [workspace], {})).toThrow('lies in a workspace this worker serves, where a fork could replace it');
    expect(() => operatorConsent({ mcpCommands: [join(bin, 'missing')] }, [workspace], {})).toThrow('does not exist on this worker');
    mkdirSync(join(workspace, 'agents'));
    mkdirSync(join(workspace, '.forkflow', 'agents'), { recursive: true });
    expect(() => operatorConsent({ agentDirs: [join(workspace, 'agents')] }, [workspace], {})).toThrow('where forks can write');
    // The .forkflow/ at a workspace root's top is hidden from every fork: a directory there is the operator's.
    expect(operatorConsent({ agentDirs: [join(workspace, '.forkflow', 'agents')] }, [workspace], {}).agentServers).toBeDefined();
    // ...unless an enclosing root's forks could reach it.
    expect(() => operatorConsent({ agentDirs: [join(workspace, '.forkflow', 'agents')] }, [workspace, dir], {})).toThrow('where forks can write');
    expect(() => operatorConsent({}, [workspace], { FORKFLOW_AGENT_DIRS: 'relative/agents' })).toThrow('must be absolute');
  });

  test('the servers an agent directory declares: stdio ones, from map and list forms', async () => {
    const agents = join(dir, 'operator-agents');
    mkdirSync(agents);
    writeFileSync(join(agents, 'docs.md'), '---\nname: docs\ndescription: Reads docs.\nmcpServers:\n  docs:\n    command: mcp-docs\n    args: ["--root", "/srv"]\n  web:\n    type: http\n    url: https://example.com/mcp\n---\nRead the docs.\n');
    const consent = operatorConsent({ agentDirs: [agents] }, [workspace], {});
    expect(await consent.agentServers!()).toEqual([{ command: 'mcp-docs', args: ['--root', '/srv'] }]);
  });
});
