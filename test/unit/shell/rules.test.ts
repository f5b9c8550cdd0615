/**
 * The tricky rules one by one: quote removal, variables and globs that could become
 * options, getopt details (combined short options, abbreviations, `--opt=value`,
 * options after operands, `--`), redirects, here-documents, line continuations,
 * wrappers, and the per-program rules (find, sort, uniq, sed, awk, git...).
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

type Case = [command: string, reason?: RegExp];

async function expectAllowed(command: string): Promise<void> {
  expect({ command, verdict: await classifyShellCommand(command) }).toEqual({ command, verdict: { readOnly: true } });
}

async function expectDenied(command: string, reason?: RegExp): Promise<void> {
  const verdict = await classifyShellCommand(command);
  expect({ command, readOnly: verdict.readOnly }).toEqual({ command, readOnly: false });
  if (reason && !verdict.readOnly) expect(verdict.reason).toMatch(reason);
}

describe('words and quoting', () => {
  it.each<Case>([
    ["find . -del''ete", /find -delete/],
    ['find . -\\delete', /find -delete/],
    ["find . $'-delete'", /find -delete/],
    ["'rm' x", /rm/],
    ['r\\m x', /rm/],
    ["$'\\x72m' x", /rm/],
    ['$cmd x', /not a literal word/],
    ['l? /', /not a literal word/],
    ['{rm,-rf} x', /not a literal word|could not be parsed/],
    ['x=-delete; find . $x', /could expand to a find action/],
    ['find . "$x"', /could expand to a find action/],
    ['sort -t $x f', /could expand to several/],
    ['sort -t * f', /could expand to several/],
    ['nice -n * ls', /literal number/],
    ['uniq src/*.txt', /two files/],
    ['git log -n$x', /could expand/],
    ['echo ${x:-$(rm y)}', /rm/],
    ['echo ${x:=y}', /parameter expansion/],
    ['echo ${!x}', /parameter expansion/],
    ['echo $((x))', /arithmetic/],
    ['echo $"x"', /locale/],
  ])('denies %j', expectDenied);

  it.each([
    'grep "rm " file',
    "echo 'a > b'",
    'echo "\\`id\\`"',
    'echo "$HOME" $PATH ${USER}',
    'ls ~ ~/src',
    'echo {a,b} a{1..3}',
    'xargs -I{} grep -l foo {} < files.txt',
    'git log @{u}..HEAD',
    "sort -t$'\\t' -k2 f",
    'sort -t "$sep" f',
    'git log --author="$name"',
  ])('allows %j', expectAllowed);
});

describe('getopt details', () => {
  it.each<Case>([
    ['sort -no out in', /sort -o/],
    ['sort -rno out in', /sort -o/],
    ['sort in -o out', /sort -o/],
    ['sort --out=x in', /sort --output/],
    ['sort --outp x in', /sort --output/],
    ['sort --compress=sh in', /compress-program/],
    ['sed -ni s/a/b/ f', /sed -i/],
    ['sed --in-pl s/a/b/ f', /sed -i/],
    ['date --se 2020-01-01', /date --set/],
    ['uniq -f 1 in out', /uniq INPUT OUTPUT/],
    ['sort -x f', /not an option I can verify/],
    ['sort --bogus f', /not an option I can verify/],
  ])('denies %j', expectDenied);

  it.each(['sort -k2,2 -t, -n f', 'sort -to f', 'sort -- -o', 'uniq -f 1 in', 'sort -rn --key=2 f', 'grep -- -delete f', "sed -n 'p' -- -i"])(
    'allows %j',
    expectAllowed,
  );
});

describe('redirects and here-documents', () => {
  it.each<Case>([
    ['ls > out', /writes a file/],
    ['ls >& out', /writes to a file/],
    ['ls 2>/dev/null >out', /writes a file/],
    ['echo x >&3', /writes to a file/],
    ['{ ls; } > out', /writes a file/],
    ['cat < /dev/tcp/h/80', /network/],
    ['sort >/dev/null -o out f', /sort -o/],
    ['sort <<EOF -o out\nx\nEOF', /sort -o/],
    ['cat <<EOF\n$(id)\nEOF', /here-document/],
    ['cat <<EOF\n`id`\nEOF', /here-document/],
    ['cat <<EOF | sh\nid\nEOF', /sh/],
    ['cat <<EOF && rm x\na\nEOF', /rm/],
    ['bash <<EOF\nls\nEOF', /bash/],
    ['cat <<-EOF\n  x\n  EOF\nrm y\nEOF', /here-document/],
  ])('denies %j', expectDenied);

  it.each([
    'ls >/dev/null 2>&1',
    'ls &>/dev/null',
    'ls 2>&1 | head',
    'cat < package.json',
    "cat <<'EOF'\n$(not run)\nEOF",
    'cat <<EOF\nplain text\nEOF',
    'cat <<EOF | grep x\na\nEOF',
    'cat <<< "hi $USER"',
  ])('allows %j', expectAllowed);
});

describe('line continuations', () => {
  it.each<Case>([
    ['find . -del\\\nete', /backslash-newline/],
    ['sort -\\\no out in', /backslash-newline/],
    ['cat <<EOF\nE\\\nOF\nrm x\nEOF', /backslash-newline/],
    ['echo "a\\\nb"', /backslash-newline/],
  ])('denies %j', expectDenied);

  it.each(["find . -name '*.ts' \\\n  -not -path './node_modules/*'", "echo 'a\\\nb'"])('allows %j', expectAllowed);
});

describe('lists, groups and control flow', () => {
  it.each<Case>([
    ['ls; rm x', /rm/],
    ['ls |& rm x', /rm/],
    ['ls & rm x', /background/],
    ['(sleep 99999 &)', /background/],
    ['(ls; (rm x))', /rm/],
    ['if true; then ls; else rm x; fi', /rm/],
    ['for PATH in /tmp; do ls; done', /PATH/],
    ['f() { ls; }', /function/],
    ['select x in a; do ls; done', /select/],
  ])('denies %j', expectDenied);

  it.each(['ls && pwd || echo no', '(cd src && ls)', '{ ls; pwd; }', 'for f in src/*.ts; do wc -l "$f"; done', '[ -f a ] && cat a', '! grep -q x f'])(
    'allows %j',
    expectAllowed,
  );
});

describe('assignments', () => {
  it.each<Case>([
    ['PATH=/tmp ls', /PATH/],
    ['LD_PRELOAD=x.so ls', /LD_PRELOAD/],
    ['IFS=, ls', /IFS/],
    ['GIT_PAGER=x git log', /GIT_PAGER/],
    ['FOO=1 ls', /environment variable/],
    ['a[$(id)]=1', /assignment|command substitution/],
    ['read PATH < f', /PATH/],
  ])('denies %j', expectDenied);

  it.each(['LC_ALL=C sort f', 'x=1; echo "$x"', 'env LANG=C ls'])('allows %j', expectAllowed);
});

describe('wrappers', () => {
  it.each<Case>([
    ['env rm x', /rm/],
    ['env -S "rm x"', /env -S/],
    ['command rm x', /rm/],
    ['timeout 5 sh -c ls', /sh/],
    ['nice -n 5 rm x', /rm/],
    ['time -o out ls', /time -o/],
    ['xargs rm', /rm/],
    ['xargs sort', /xargs adds arguments/],
    ['xargs find .', /xargs adds arguments/],
    ['xargs env ls', /xargs adds arguments/],
    ['env env env env env env env env env ls', /nested/],
  ])('denies %j', expectDenied);

  it.each(['env', 'env LC_ALL=C sort f', 'command -v git', 'timeout 10 grep -r x .', 'time ls', 'nice -10 ls', 'xargs', 'xargs -0 grep -l x'])(
    'allows %j',
    expectAllowed,
  );
});

describe('find', () => {
  it.each<Case>([
    ['find . -delete', /find -delete/],
    ['find . -exec rm {} +', /rm/],
    ['find . -exec {} \\;', /literal name/],
    ['find . -fprint out', /find -fprint/],
    ['find . -name *.ts', /could expand/],
    ['find . -newermt 2024-01-01 -delete', /find -delete/],
    ['find . -files0-from x', /not a test/],
  ])('denies %j', expectDenied);

  it.each(["find . -name '*.ts' -mtime -7 -size -10k -print", 'find src/* -maxdepth 0', 'find . -newermt 2024-01-01'])('allows %j', expectAllowed);
});

describe('sed scripts', () => {
  it.each<Case>([
    ["sed 's/a/b/w out' f", /`w` flag/],
    ["sed 's/a/b/ w out' f", /`w` flag/],
    ["sed 's/a/b/e' f", /`e` flag/],
    ["sed -n '1w out' f", /`w` command/],
    ["sed -n '/x/{p;W out\n}' f", /`W` command/],
    ["sed 'e ls' f", /`e` command/],
    ["sed -n ':a w out' f", /unexpected/],
    ["sed 's/[/]/x/w out' f", /`w` flag/],
    ["sed 'k' f", /not one I can verify/],
  ])('denies %j', expectDenied);

  it.each(["sed -n '1,40p' f", "sed -n '/a/,/b/{p;q}' f", "sed 's|/|\\\\|g' f", "sed -E 's/([0-9]+)/<\\1>/2' f", "sed '$!d' f", "sed -n '/w/p' f", "sed '1i header' f"])(
    'allows %j',
    expectAllowed,
  );
});

describe('awk programs', () => {
  it.each<Case>([
    ["awk 'BEGIN{system(\"id\")}'", /system/],
    ["awk '{print > \"x\"}' f", /print > file/],
    ["awk '{printf(\"%s\", $0) >> \"x\"}' f", /print > file/],
    ["awk '{print | \"sh\"}' f", /pipe/],
    ["awk '{\"date\" | getline d}' f", /pipe|getline/],
    ["awk '/\"/ { print > \"f\" } /\"/' f", /print > file/],
    ["awk 'x++ / 2' f", /too complex/],
    ['awk -f prog.awk f', /awk -f/],
  ])('denies %j', expectDenied);

  it.each([
    "awk '{print $1}' f",
    "awk -F: -v OFS=, '{print $1, $3}' /etc/passwd",
    "awk '$3 > 100 {print $1}' f",
    "awk '{print ($1 > 2)}' f",
    "awk '{ n = $1 / 2; print n }' f",
    "awk '/a|b/' f",
    "awk '$1 ~ /^#/ || NF == 0 {c++} END {print c}' f",
    // `/a|b/` is a regex, not a pipe: the lexer must tell them apart.
  ])('allows %j', expectAllowed);
});

describe('git', () => {
  it.each<Case>([
    ['git -c core.pager=id log', /git -c/],
    ['git --exec-path=/tmp log', /exec-path/],
    ['git log --output=x', /--output/],
    ['git diff --outp=x', /--output/],
    ['git diff --ext-diff', /ext-diff/],
    ['git grep -nO foo', /open-files-in-pager/],
    ['git branch new', /creates a branch/],
    ['git branch --del x', /deletes a branch/],
    ['git tag v1', /creates a tag/],
    ['git config user.name x', /may only read/],
    ['git config --unse x', /may only read/],
    ['git remote add o u', /read-only/],
    ['git remote show origin', /contacts the remote/],
    ['git stash', /read-only/],
    ['git commit -m x', /not a read-only git subcommand/],
    ['git lg', /not a read-only git subcommand/],
  ])('denies %j', expectDenied);

  it.each([
    'git status -sb',
    'git -C sub --no-pager log --oneline -5',
    'git diff --name-only HEAD~1 -- src',
    'git branch -a --contains HEAD',
    "git tag -l 'v1.*'",
    'git config --get remote.origin.url',
    'git remote show -n origin',
    'git stash list',
    'git reflog -5',
    'git log -- --output=x',
  ])('allows %j', expectAllowed);
});

describe('other programs', () => {
  it.each<Case>([
    ['uniq in out', /uniq INPUT OUTPUT/],
    ['uniq *.txt', /could expand/],
    ['date -s now', /date -s/],
    ['date 0101', /set the system clock/],
    ['hostname x', /host name/],
    ['ip link set x up', /network/],
    ['ip link s x up', /network/],
    ['ip -b f', /commands from a file/],
    ['printf -v x y', /printf -v/],
    ["test -v 'a[$(id)]'", /test -v/],
    ["[ \"$op\" -v 'x' ]", /test -v/],
    ['test "$a" "$b"', /keep a test/],
    ['[ a > b ]', /redirections/],
    ['tree -o out', /tree -o/],
    ['file -C -m m', /file -C/],
    ['rg --pre ./x foo', /rg --pre/],
    ['./ls', /by path/],
    ['/usr/local/bin/ls', /by path/],
  ])('denies %j', expectDenied);

  it.each(['/usr/bin/grep -r x .', 'date +%F', 'date -d yesterday +%s', 'hostname -f', 'ip -br a', 'ip route get 1.1.1.1', 'printf "%s\\n" x', 'test -n "$x"', 'tree -L 2'])(
    'allows %j',
    expectAllowed,
  );
});
