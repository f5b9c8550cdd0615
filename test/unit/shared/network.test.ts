/**
 * A fork's network allowance (src/shared/tools/network.ts) and the proxy's address rule
 * (src/activities/tools/sandbox/net-proxy.ts): strict entries, hostile values refused or
 * never matching, and addresses checked after resolution (DNS rebinding, cloud metadata).
 */
import { validateForkInput } from '../../../src/shared/wire/fork-input-validation';
import { matchHost, networkAllowanceSchema, parseHostRule } from '../../../src/shared/tools/network';
import { addressRefusal } from '../../../src/activities/tools/sandbox/net-proxy';
import { bwrapArgs, planShell, SANDBOX_PROXY_DIR, type SandboxAvailability } from '../../../src/activities/tools/sandbox';

const allows = (hosts: string[]) => networkAllowanceSchema.safeParse({ allowedHosts: hosts }).success;

describe('allowance entries', () => {
  it.each(['example.com', 'api.github.com:443', '*.githubusercontent.com', 'localhost', 'localhost:8080', 'xn--bcher-kva.example', 'Registry.NPMJS.org', 'a-b.c0.io'])('accepts %s', (entry) => {
    expect(allows([entry])).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['everything', '*'],
    ['a whole top-level domain', '*.com'],
    ['a scheme', 'https://example.com'],
    ['a path', 'example.com/x'],
    ['user info', 'user@example.com'],
    ['the metadata address', '169.254.169.254'],
    ['a loopback address', '127.0.0.1'],
    ['an IPv6 literal', '[::1]'],
    ['a bare number', '2130706433'],
    ['a hex address', '0x7f.0.0.1'],
    ['a space', 'exa mple.com'],
    ['non-ASCII', 'bücher.de'],
    ['a Cyrillic look-alike', 'ex\u0430mple.com'],
    ['a wildcard inside', 'a.*.example.com'],
    ['port 0', 'example.com:0'],
    ['a port out of range', 'example.com:70000'],
    ['a leading hyphen', '-bad.com'],
    ['a trailing dot', 'example.com.'],
    ['an empty label', 'example..com'],
    ['a label of 64 characters', `${'a'.repeat(64)}.com`],
  ])('refuses %s', (_why, entry) => {
    expect(allows([entry])).toBe(false);
    expect(parseHostRule(entry)).toHaveProperty('error');
  });

  it('refuses an empty list and more than 64 entries', () => {
    expect(allows([])).toBe(false);
    expect(allows(Array.from({ length: 64 }, (_, i) => `h${i}.example.com`))).toBe(true);
    expect(allows(Array.from({ length: 65 }, (_, i) => `h${i}.example.com`))).toBe(false);
  });

  it('is the fork input’s sandbox.network, beside the legacy false', () => {
    expect(validateForkInput({ prompt: 'x', sandbox: { network: { allowedHosts: ['example.com'] } } })).toMatchObject({ ok: true });
    expect(validateForkInput({ prompt: 'x', sandbox: { network: false } })).toMatchObject({ ok: true });
    expect(validateForkInput({ prompt: 'x', sandbox: { network: true } })).toMatchObject({ ok: false });
    expect(validateForkInput({ prompt: 'x', sandbox: { network: { allowedHosts: ['*'] } } })).toMatchObject({ ok: false, issues: [expect.stringContaining('sandbox.network') as string] });
    expect(validateForkInput({ prompt: 'x', sandbox: { network: { allowedHosts: ['example.com'], ports: [22] } } })).toMatchObject({ ok: false });
  });
});

describe('matchHost', () => {
  const allowance = { allowedHosts: ['example.com', '*.pkg.dev', 'localhost:8080'] };
  it.each([
    ['example.com', 443, true, true],
    ['EXAMPLE.com.', 80, true, true],
    ['example.com', 8443, false, false],
    ['www.example.com', 443, false, false],
    ['a.pkg.dev', 443, true, false],
    ['a.b.pkg.dev', 80, true, false],
    ['pkg.dev', 443, false, false],
    ['evilpkg.dev', 443, false, false],
    ['pkg.dev.evil.org', 443, false, false],
    ['localhost', 8080, true, true],
    ['localhost', 80, false, false],
    ['127.0.0.1', 8080, false, false],
    ['169.254.169.254', 80, false, false],
    ['[::1]', 443, false, false],
    ['ex\u0430mple.com', 443, false, false],
  ] as const)('%s:%d allowed=%s exact=%s', (host, port, allowed, exact) => {
    const m = matchHost(allowance, host, port);
    expect(m.allowed).toBe(allowed);
    if (m.allowed) expect(m.exact).toBe(exact);
  });

  it('an exact entry beside a wildcard one makes the host exact', () => {
    expect(matchHost({ allowedHosts: ['*.example.com', 'api.example.com'] }, 'api.example.com', 443)).toEqual({ allowed: true, exact: true });
  });
});

describe('addressRefusal (checked on the resolved address)', () => {
  it.each(['169.254.169.254', '::ffff:169.254.169.254', 'fe80::1', '64:ff9b::a9fe:a9fe'])('never connects to link-local %s, even for an exact host', (a) => {
    expect(addressRefusal(a, true)).toContain('link-local');
    expect(addressRefusal(a, false)).toContain('link-local');
  });
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', '::ffff:127.0.0.1', 'fd00::1', '2002:a9fe:a9fe::1'])('connects to internal %s only for a host listed exactly', (a) => {
    expect(addressRefusal(a, false)).toBeDefined();
    expect(addressRefusal(a, true)).toBeUndefined();
  });
  it.each(['93.184.216.34', '2606:4700::1111'])('connects to public %s', (a) => {
    expect(addressRefusal(a, false)).toBeUndefined();
  });
});

it('planShell carries the allowance only into a sandboxed plan', () => {
  const yes: SandboxAvailability = { available: true, launcher: 'bubblewrap', path: '/usr/bin/bwrap', version: 'x', processCap: { kind: 'rlimit' } };
  const network = { allowedHosts: ['example.com'] };
  expect(planShell({ kind: 'none' }, { root: '/w', system: [] }, { availability: yes, require: false, network })).toMatchObject({ kind: 'sandbox', network });
  expect(planShell({ kind: 'none' }, { root: '/w', system: [] }, { availability: yes, require: false })).not.toHaveProperty('network');
});

it('bwrapArgs binds the call’s proxy directory read-only, and nothing when there is none', () => {
  const spec = { root: '/w', writable: [], system: [], tmpBytes: 1024 };
  const args = bwrapArgs({ ...spec, proxyDir: '/tmp/forkflow-net-x' });
  const at = args.indexOf('/tmp/forkflow-net-x');
  expect(args.slice(at - 1, at + 2)).toEqual(['--ro-bind', '/tmp/forkflow-net-x', SANDBOX_PROXY_DIR]);
  expect(bwrapArgs(spec)).not.toContain(SANDBOX_PROXY_DIR);
});
