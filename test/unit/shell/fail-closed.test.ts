/**
 * The classifier fails closed: parse errors, missing tokens, unknown syntax, odd
 * characters, oversized input and internal errors are all denials with a reason.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { bashParser } from '../../../src/activities/tools/shell/parser';

async function denied(command: string): Promise<string> {
  const verdict = await classifyShellCommand(command);
  if (verdict.readOnly) throw new Error(`expected a denial for ${JSON.stringify(command)}`);
  return verdict.reason;
}

describe('fail closed', () => {
  it.each([
    ['ls |', /could not be parsed/],
    ['echo "unterminated', /could not be parsed/],
    ['if true; then ls', /could not be parsed/],
    ['x=1 >/dev/null', /could not be parsed/],
    ['cat <<EOF\nno end', /could not be parsed|not terminated/],
    ['ls ;;', /unsupported shell syntax/],
    ['case x in a) ls;; esac', /case/],
    ['[[ -v x ]]', /-v/],
    ['(( i++ ))', /arithmetic/],
    ['ls !(x)', /could not be parsed|unsupported/],
  ])('%j is denied: %p', async (command, reason) => {
    expect(await denied(command)).toMatch(reason);
  });

  it('denies control characters and carriage returns before parsing', async () => {
    expect(await denied('ls\rrm -rf x')).toMatch(/control characters/);
    expect(await denied('ls\u0000; rm x')).toMatch(/control characters/);
  });

  it('denies non-ASCII outside quotes but not inside', async () => {
    expect(await denied('ls\u00a0-la')).toMatch(/non-ASCII/);
    expect(await denied('\u0441at f')).toMatch(/non-ASCII/);
    expect(await classifyShellCommand('grep "caf\u00e9" f')).toEqual({ readOnly: true });
  });

  it('denies oversized commands without parsing them', async () => {
    expect(await denied('echo ' + 'a'.repeat(30_000))).toMatch(/longer than/);
  });

  it('denies a non-string command', async () => {
    expect(await denied(42 as unknown as string)).toMatch(/string/);
  });

  it('treats an internal error as a denial', async () => {
    const parser = await bashParser();
    const spy = jest.spyOn(parser, 'parse').mockImplementation(() => {
      throw new Error('boom');
    });
    try {
      expect(await denied('ls')).toMatch(/could not be checked \(boom\)/);
    } finally {
      spy.mockRestore();
    }
    expect(await classifyShellCommand('ls')).toEqual({ readOnly: true });
  });

  it('loads the parser once per process', async () => {
    const [a, b] = await Promise.all([bashParser(), bashParser()]);
    expect(a).toBe(b);
    expect(await bashParser()).toBe(a);
  });

  it('allows an empty command or a comment (nothing runs)', async () => {
    expect(await classifyShellCommand('')).toEqual({ readOnly: true });
    expect(await classifyShellCommand('# rm -rf /')).toEqual({ readOnly: true });
  });
});
