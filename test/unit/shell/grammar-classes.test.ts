/**
 * Bypass classes 1 and 2 of issue 10, each as a table: bash grammar that executes or
 * assigns inside constructs that look inert (named descriptors, subscripts, arithmetic,
 * parameter operators, assigning builtins), and `$'...'` strings that tree-sitter-bash
 * reads differently from bash. Next to each, the everyday look-alikes that must pass:
 * substitutions whose inner commands only read, literal arithmetic, decoded `$'...'`.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';
import { decodeAnsiC } from '../../../src/activities/tools/shell/words';

async function verdictOf(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

describe('class 1: named descriptors, subscripts, arithmetic, side-effect expansions', () => {
  it.each([
    'echo hi {fd}>/dev/null',
    'ls {x}<package.json',
    'echo {a[$(touch p)]}>&-',
    'echo {a[x]}>&-',
    'cat {fd}<<<x',
    'cat {fd}<<EOF\nx\nEOF',
    'echo $((x))',
    'echo $(( x + 1 ))',
    'echo $((a[1]))',
    'echo $((x=1))',
    'echo $((1+x++))',
    'echo $[x]',
    'echo "$((y))"',
    'echo $(( $(id) ))',
    "x='a[$(touch p)]'; echo $((x))",
    'echo ${x:=y}',
    'echo ${x@P}',
    'echo "${x@P}"',
    'echo ${x[$(touch p)]}',
    'echo ${!x}',
    'echo ${x:-$(touch p)}',
    'echo ${x:0:$y}',
    "test -v 'a[$(touch p)]'",
    '[ -v x ]',
    '[ -R x ]',
    'printf -v x %s y',
    'printf -vx %s y',
    "read 'a[$(touch p)]' < f",
    'read PATH < f',
    'read -a IFS < f',
    'mapfile -C cb x < f',
    'readarray PATH < f',
    "mapfile 'a[$(touch p)]' < f",
    'getopts ab x',
    'wait -p x',
    'let x=y',
    "let 'a[$(touch p)]=1'",
    'local x=1',
    'declare x=1',
    'typeset -i x=1',
    'export x=1',
    'readonly x',
    'unset x',
    'shopt -s extglob',
    'set -o xtrace',
    "trap 'touch p' EXIT",
    'compgen -W x',
    'complete -C cmd x',
    'bind -x x:y',
    'fc -s',
    'hash -p /bin/sh ls',
    'enable -f x.so y',
    'builtin read PATH',
    'builtin eval x',
    'command declare x=1',
    'command mapfile -C cb x',
    'coproc ls',
    'echo $(touch p)',
    'echo "$(rm -f x)"',
    'echo `touch p`',
    'echo `echo \\`touch p\\``',
    'x=$(touch p) ls',
    'cat <(touch p)',
    'cat >(touch p)',
    'cat <(ls >out)',
    '$(echo ls) x',
    '"$(echo ls)" x',
    '`echo ls` x',
    'echo $(cat <<EOF\nx\nEOF\n)',
    'echo $(ls # )\n)',
    'echo $(> out)',
    'echo $(sort -o out f)',
  ])('denies %j', async (command) => {
    expect(await verdictOf(command)).toBe(false);
  });

  it.each([
    "wc -l $(git ls-files '*.ts')",
    'diff <(sort a.txt) <(sort b.txt)',
    'echo "$(git rev-parse --abbrev-ref HEAD)"',
    'echo $(git log --oneline | wc -l)',
    'for f in $(git ls-files); do wc -l "$f"; done',
    'x=$(git rev-parse HEAD); echo "$x"',
    'cd "$(git rev-parse --show-toplevel)" && ls',
    'echo `ls`',
    'echo $(< package.json)',
    'cat <(ls) >(cat)',
    'echo $((1 + 2 * 3))',
    'echo $(( (4 << 2) >= 16 ? 1 : 0 ))',
    'echo $[1+1]',
    'echo "$((60*60))"',
    '[ "$x" -eq 1 ]',
    'test "$x" -gt 0',
    'read -r line < f',
    'printf "%s\\n" "$x"',
    'printf -- "-%s\\n" x',
  ])('allows %j', async (command) => {
    expect(await verdictOf(command)).toBe(true);
  });
});

describe("class 2: $'...' strings", () => {
  it.each([
    "echo $'\\\\' ; touch p ; echo ''",
    "echo $'a\\'b' ; touch p",
    "find . $'-\\x64elete'",
    "find . $'-\\144elete'",
    "find . $'-del\\x65te'",
    "$'\\x72m' -f x",
    "$'\\162m' -f x",
    "echo $'\\u0041'",
    "echo $'\\U00000041'",
    "echo $'\\cA'",
    "echo $'a\\0b'",
    "echo $'a\\x00b'",
    "sort $'-\\x6f' out f",
  ])('denies %j', async (command) => {
    expect(await verdictOf(command)).toBe(false);
  });

  it.each(["sort -t$'\\t' -k2 f", "echo $'a\\tb'", "grep $'\\x41' f", 'echo "$(echo $\'a\\tb\')"', "echo $'it\\'s'"])('allows %j', async (command) => {
    expect(await verdictOf(command)).toBe(true);
  });

  it.each([
    ["$'a\\tb'", 'a\tb'],
    ["$'\\x41\\x4a'", 'AJ'],
    ["$'\\101\\0101'", 'A\b1'],
    ["$'\\xg'", '\\xg'],
    ["$'\\q'", '\\q'],
    ["$'\\e[0m'", '\x1b[0m'],
    ["$'\\'\\\"\\\\\\?'", '\'"\\?'],
    ["$'\\x4142'", 'A42'],
    ["$'\\777'", '\xff'],
  ])('decodes %j as bash does', (text, value) => {
    expect(decodeAnsiC(text)).toBe(value);
  });
});
