/**
 * Bypass class 5 of issue 10: wrappers and assignments that remove or override the
 * protective environment the Bash tool sets for read-only commands, or that change what
 * runs or what gets loaded. Every variable the tool sets is checked against every way
 * of changing it; harmless locale and display settings must still pass.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { READ_ONLY_GIT_CONFIG, shellEnvironment } from '../../../src/activities/tools/shell-env';

async function allowed(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

const protectiveNames = Object.keys(shellEnvironment({ PATH: '/usr/bin', HOME: '/home/u', TMPDIR: '/tmp' }, { readOnly: true }));

describe('the read-only environment', () => {
  it('sets the git protections in the command scope, counted correctly', () => {
    const env = shellEnvironment({}, { readOnly: true });
    expect(env.GIT_CONFIG_COUNT).toBe(String(READ_ONLY_GIT_CONFIG.length));
    const pairs = READ_ONLY_GIT_CONFIG.map((_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]);
    expect(pairs).toEqual(READ_ONLY_GIT_CONFIG.map(([k, v]) => [k, v]));
    expect(pairs).toEqual(expect.arrayContaining([['safe.bareRepository', 'explicit'], ['protocol.allow', 'never'], ['core.fsmonitor', 'false']]));
    expect(env).toMatchObject({ GIT_OPTIONAL_LOCKS: '0', GIT_CONFIG_GLOBAL: '/dev/null', GIT_NO_LAZY_FETCH: '1', PAGER: 'cat' });
  });

  it('drops empty and relative PATH entries for read-only commands', () => {
    const source = { PATH: '.:/usr/bin::bin:/bin' };
    expect(shellEnvironment(source, { readOnly: true }).PATH).toBe('/usr/bin:/bin');
    expect(shellEnvironment(source, { readOnly: false }).PATH).toBe(source.PATH);
  });

  it('keeps secrets out and leaves git protections off for workspace commands', () => {
    const env = shellEnvironment({ ANTHROPIC_API_KEY: 'k', PATH: '/bin' }, { readOnly: false });
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(env.GIT_CONFIG_COUNT).toBeUndefined();
  });
});

describe('class 5: the protective environment cannot be changed', () => {
  it.each(protectiveNames)('refuses setting, overriding or unsetting %s', async (name) => {
    expect(await allowed(`${name}=x git log`)).toBe(false);
    expect(await allowed(`${name}=x; git log`)).toBe(false);
    expect(await allowed(`env ${name}=x git log`)).toBe(false);
    expect(await allowed(`env -u ${name} git log`)).toBe(false);
    expect(await allowed(`env --unset=${name} git log`)).toBe(false);
    expect(await allowed(`for ${name} in x; do git log; done`)).toBe(false);
    expect(await allowed(`read ${name} < f`)).toBe(false);
  });

  it.each([
    'env -i git log',
    'env - git log',
    'env --ignore-environment git log',
    'env --ign git log',
    'env -iu PAGER git log',
    'env -C / ls',
    'env --chdir=/ ls',
    "env -S 'git log'",
    "env --split-string='git log'",
    'LD_PRELOAD=/tmp/x.so ls',
    'LD_LIBRARY_PATH=. ls',
    'BASH_ENV=x ls',
    'ENV=x ls',
    'SHELLOPTS=xtrace ls',
    'BASHOPTS=extglob ls',
    "PS4='$(id)' ls",
    'IFS=/ ls',
    'PROMPT_COMMAND=id ls',
    'CDPATH=/tmp cd x',
    'GLOBIGNORE=x ls',
    'GIT_DIR=/tmp/x git log',
    'GIT_EXEC_PATH=/tmp git log',
    'GIT_EXTERNAL_DIFF=x git diff',
    'GIT_SSH_COMMAND=x git log',
    'GIT_CONFIG_PARAMETERS="\'core.pager=id\'" git log',
    'EDITOR=id git log',
    'VISUAL=id git log',
    'LESSOPEN="|id" ls',
    'MANPAGER=id ls',
    'XDG_CONFIG_HOME=/tmp git log',
    'TMPDIR=. sort f',
    'RIPGREP_CONFIG_PATH=x rg foo',
    'AWKPATH=. awk 1 f',
    'FOO=1 ls',
    'histchars=x; ls',
    'auto_resume=1; ls',
    'http_proxy=x git log',
    'HTTPS_PROXY=x git log',
  ])('denies %j', async (command) => {
    expect(await allowed(command)).toBe(false);
  });

  it.each([
    'env',
    'env -0',
    'env LC_ALL=C sort f',
    'LC_ALL=C git log --oneline -3',
    'LANG=C.UTF-8 grep -r x .',
    'TZ=UTC date',
    'NO_COLOR=1 ls',
    'COLUMNS=200 ls',
    "GREP_COLORS='mt=01;31' grep --color=always x f",
    'x=1 ls',
    'dir=src; ls "$dir"',
  ])('allows %j', async (command) => {
    expect(await allowed(command)).toBe(true);
  });
});
