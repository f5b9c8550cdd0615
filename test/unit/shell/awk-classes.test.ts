/**
 * Bypass class 3 of issue 10, awk part: programs are tokenised properly (strings, regex
 * literals versus division, comments), so `>` and `&&` used as comparisons pass while
 * writers, command runners, gawk network files, ARGV rewriting, indirect calls and
 * extension loading are refused.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

async function allowed(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

describe('class 3: awk programs', () => {
  it.each([
    "awk 'BEGIN { system(\"id\") }'",
    "awk 'BEGIN { system (\"id\") }'",
    "awk '{ print $1 > 2 }' f",
    "awk '{ print > \"out\" }' f",
    "awk '{ print $1 >> \"log\" }' f",
    "awk '{ printf(\"%s\", $0) > \"x\" }' f",
    "awk 'BEGIN { printf \"%s\\n\", \"x\" > \"out\" }'",
    "awk '{ print | \"sh\" }' f",
    "awk '{ print |& \"cat\" }' f",
    "awk 'BEGIN { \"date\" | getline d }'",
    "awk 'BEGIN { cmd = \"date\"; cmd | getline d }'",
    "awk 'BEGIN { while ((\"ls\" | getline l) > 0) print l }'",
    "awk 'BEGIN { getline l < \"/inet/tcp/0/example.com/80\" }'",
    "awk 'BEGIN { getline l < \"/inet6/tcp/0/example.com/80\" }'",
    "awk 'BEGIN { getline l < \"/in\" \"et/tcp/0/h/80\" }'",
    "awk 'BEGIN { f = \"/inet/tcp/0/h/80\"; getline l < f }'",
    "awk 'BEGIN { getline l < ARGV[1] }' f",
    "awk 'BEGIN { s = \"/inet/udp/0/h/53\" }'",
    "awk '{ print }' /inet/tcp/0/example.com/80",
    "awk '{ print }' /inet4/tcp/0/example.com/80",
    'awk \'{ print }\' "$f"',
    'awk \'{ print }\' $f',
    "awk 'BEGIN { ARGV[1] = \"/inet/tcp/0/h/80\"; ARGC = 2 } { print }'",
    "awk 'BEGIN { ARGC++ }' f",
    "awk '{ print }' ARGC=3 f",
    "awk -v ARGC=3 '{ print }' f",
    "awk 'BEGIN { f = \"system\"; @f(\"id\") }'",
    "awk '@load \"filefuncs\"; BEGIN { }'",
    "awk '@include \"x.awk\"'",
    "awk '@namespace \"x\"'",
    'awk -f prog.awk f',
    "awk -i inplace '{ print }' f",
    "awk -l filefuncs '{ print }' f",
    'awk -E prog f',
    'awk --exec=prog f',
    "awk --include=x '{ print }' f",
    "awk --load=x '{ print }' f",
    "awk -W exec '{ print }' f",
    'awk "$prog" f',
    "awk 'x++ / 2' f",
    "awk '{ print a & b }' f",
  ])('denies %j', async (command) => {
    expect(await allowed(command)).toBe(false);
  });

  it.each([
    "awk '$3 > 10 && $1 != \"x\"' f",
    "awk '$3 > 10 && $1 != \"x\" {print $1}' f",
    "awk 'NR > 1 && $2 > 0 { s += $2 } END { print s }' f",
    "awk -F, '{ if ($2 > 5 && $3 < 2) print $1 }' f",
    "awk '$1 ~ /^[a-z]+$/ && NF > 2' f",
    "awk '{ print ($1 > 2) ? \"big\" : \"small\" }' f",
    "awk '{ getline; print }' f",
    "awk '{ getline line; print line }' f",
    "awk '{ while ((getline line < \"other.txt\") > 0) n++ } END { print n }' f",
    "awk '{ a[$1]++ } END { for (k in a) print k, a[k] }' f",
    "awk '{ sum += $NF } END { print sum / NR }' f",
    "awk '{ x = $1 / 2 / 3; print x }' f",
    "awk 'length > 80' f",
    "awk '{ gsub(/a\\/b/, \"x\"); print }' f",
    "awk 'BEGIN { FS = \":\" } { print $1 }' /etc/passwd",
    "awk '{ print $1 }' src/*.txt",
    "awk -v n=3 'NR <= n' f",
    "awk '!seen[$0]++' f",
    "awk '{ print $2 }' OFS=, f",
    "awk '/a|b/' f",
    "awk '# comment with > and | in it\n{ print $1 }' f",
    "awk '{ printf(\"%s %s\\n\", $1, $2) }' f",
  ])('allows %j', async (command) => {
    expect(await allowed(command)).toBe(true);
  });
});

describe("seed 000's opt-in: awk and tee withheld unless the operator allows them back (S0-33)", () => {
  it('refuses every awk and tee by name when withheld, through wrappers too, and says how to allow them', async () => {
    for (const command of ["awk '{ print $1 }' f", "gawk 'NR > 1' f", "env mawk '{ print }' f", 'ls | tee /dev/null', "find . -name x -exec awk '{print}' {} \\;"]) {
      const verdict = await classifyShellCommand(command, { withhold: ['awk', 'tee'] });
      expect(verdict).toMatchObject({ readOnly: false, reason: expect.stringMatching(/its operator did not allow (awk|tee) back: shellPrograms/) as string });
    }
    // Allowed back: the validated shapes pass, the others are still refused.
    expect((await classifyShellCommand("awk '{ print $1 }' f", { withhold: ['tee'] })).readOnly).toBe(true);
    expect((await classifyShellCommand("awk 'BEGIN { system(\"id\") }'", { withhold: ['tee'] })).readOnly).toBe(false);
    expect((await classifyShellCommand('ls | tee /dev/null', { withhold: ['awk'] })).readOnly).toBe(true);
    expect((await classifyShellCommand('ls | tee out.txt', { withhold: ['awk'] })).readOnly).toBe(false);
  });
});
