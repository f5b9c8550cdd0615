/**
 * False denials of issue 10 removed without opening a class: `find -exec` running a
 * read-only program, `[[ ... ]]` without arithmetic on unknown values, version queries
 * of interpreters, and the exploring tools (rg, fd, xxd) with their writing or
 * executing corners refused.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

async function allowed(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

describe('everyday forms that must pass', () => {
  it.each([
    "find . -name '*.ts' -exec grep -l 'TODO' {} +",
    'find . -type f -exec cat {} \\;',
    'find src -name "*.md" -execdir wc -l {} +',
    'find . -exec sed -n 1p {} \\;',
    'find . -maxdepth 2 -exec head -5 {} \\;',
    'find . -exec git log -1 --format=%H -- {} \\;',
    '[[ -f package.json ]] && cat package.json',
    '[[ -d src && -f src/index.ts ]]',
    '[[ $a =~ ^v[0-9]+$ && "$b" != *.ts ]]',
    '[[ -n $(git status --short) ]] && echo dirty',
    '[[ 1 -eq 1 ]]',
    'node --version',
    'node -v',
    'python3 --version',
    'python3 -V',
    'gcc --version',
    'bash --version',
    'npm --version',
    'rg -n "TODO" src',
    'rg --files | head',
    "rg -l 'foo' -g '*.ts'",
    'rg -z pattern logs',
    "fd -e ts 'test'",
    'fdfind --type f src',
    'xxd package.json | head',
    'xxd -l 64 -c 16 file.bin',
    'tar -tzf x.tgz',
    'tar tzf x.tgz',
    'tar --list -f x.tar',
    'unzip -l x.zip',
  ])('allows %j', async (command) => {
    expect(await allowed(command)).toBe(true);
  });

  it.each([
    'find . -exec rm {} \\;',
    "find . -exec sh -c 'rm x' \\;",
    'find . -exec {} \\;',
    'find . -exec ./x {} \\;',
    'find . -ok cat {} \\;',
    'find . -okdir cat {} \\;',
    'find . -exec sed -i s/a/b/ {} +',
    'find . -exec uniq {} +',
    'find . -exec sort -o {} {} \\;',
    'find . -exec cat {} + -delete',
    'find . -exec grep x {} \\; -fprint out',
    'find . -exec grep x {} \\; -fls out',
    'find . -exec grep x',
    'find . -exec env rm {} \\;',
    'find . -exec find {} -delete \\;',
    'find . -execdir sh {} \\;',
    '[[ $x -eq 1 ]]',
    "[[ 'a[$(touch p)]' -eq 1 ]]",
    '[[ -v x ]]',
    '[[ -R x ]]',
    '[[ $a == $(touch p) ]]',
    '[[ $a =~ $(touch p) ]]',
    'node -e "require(\'fs\').writeFileSync(\'x\', \'\')"',
    'node script.js',
    'node --version script.js',
    'python3 -c "open(\'x\',\'w\')"',
    'python3 -m json.tool f',
    'bash -c ls',
    'npm ls',
    'npm --version --json',
    'go version',
    'make',
    'make -n',
    'rg --pre ./x foo',
    'rg --pre-glob "*.pdf" --pre ./x foo',
    'fd -x rm',
    'fd --exec rm {}',
    'fd -X cat',
    'xxd in.bin out.bin',
    'xxd -r dump.hex out.bin',
    'tar -xzf x.tgz',
    'tar xf x.tar',
    'tar -cf x.tar .',
    'tar -tf host:x.tar',
    'tar -t --to-command=sh -f x.tar',
    "tar -t -I 'sh -c id' -f x.tar",
    'tar -tf x.tar --checkpoint-action=exec=id',
    'unzip x.zip',
    'unzip -o x.zip',
    'unzip -l x.zip -d out',
  ])('denies %j', async (command) => {
    expect(await allowed(command)).toBe(false);
  });
});
