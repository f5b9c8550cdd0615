/**
 * Bypass class 3 of issue 10, sed part: the whole script is parsed with GNU sed's
 * grammar, so a writer or executor cannot hide after a label, a branch, a `v` version
 * check, an `a/i/c` text that ends earlier than it seems, a file name, or an unusual
 * delimiter. Every case below that is denied for writing was confirmed to write a file
 * with GNU sed 4.9 in a sandbox where marked; the allowed look-alikes were confirmed
 * not to.
 */
import { classifyShellCommand } from '../../../src/activities/tools/shell';

async function allowed(command: string): Promise<boolean> {
  return (await classifyShellCommand(command)).readOnly;
}

describe('class 3: sed scripts', () => {
  it.each([
    // writers and executors, in every position GNU reads as a command
    "sed 's/a/b/w out' f",
    "sed 's/a/b/ w out' f",
    "sed 's/a/b/3w out' f",
    "sed 's/a/b/gpw out' f",
    "sed 's/a/b/e' f",
    "sed 's#a#b#e' f",
    "sed 's/x/y/;s/a/b/w out' f",
    "sed -n '1w out' f",
    "sed -n '$W out' f",
    "sed -n '/x/{p;W out\n}' f",
    "sed 'e ls' f",
    "sed '1e' f",
    "sed '\\,foo,w out' f",
    "sed '\\%x%e' f",
    "sed 'y/a/b/;w x' f",
    // hidden behind labels, branches and version checks (GNU reads on after them)
    "sed -n ':a w out' f", // writes with GNU sed 4.9
    "sed 'v 4.2 w out' f", // writes with GNU sed 4.9
    "sed 'v;w out' f",
    "sed 'bx;w out' f",
    "sed 'b x\nw out' f",
    "sed 'tx w out' f",
    "sed 'T;e id' f",
    "sed -n '/x/b}w out' f",
    "sed ':a}w out' f",
    // text that ends before it seems to
    "sed '1a\\\\\nw out' f", // writes with GNU sed 4.9: `a\\` takes the second backslash as text
    "sed -e 'a\\\\' -e 'w out' f", // writes with GNU sed 4.9
    "sed '1i\\\\\ne id' f",
    // regex readings that differ between versions
    "sed 's/[/]/x/w out' f",
    "sed 's/\\c/x/;w out' f",
    // several -e pieces are one script; options and file scripts
    "sed -e 's/a/b/' -e 'w x' f",
    "sed -n 'p' -e 'w x' f",
    "sed -i 's/a/b/' f",
    "sed -ni 's/a/b/' f",
    "sed --in-place=.bak 's/a/b/' f",
    "sed --in-pl 's/a/b/' f",
    "sed -s -i 's/a/b/' f g",
    'sed -f script.sed f',
    'sed --file=script.sed f',
    'sed "$script" f',
    // not understood
    "sed 'L' f",
    "sed 'k' f",
    "sed '1{p' f",
    "sed 's/a/b/' -e",
  ])('denies %j', async (command) => {
    expect(await allowed(command)).toBe(false);
  });

  it.each([
    "sed -n '1,40p' f",
    "sed -n '/start/,/end/p' f",
    "sed -n '$!{h;d};x;G;p' f",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed '/x/b end\ns/a/b/\n:end' f",
    "sed ':a;s/x/y/;ta' f",
    "sed '1a\\\ntext\\\nw out' f", // text, confirmed: nothing written
    "sed '1a hello; w out' f", // text, confirmed: nothing written
    "sed -e '1a\\' -e 'w out' f", // text, confirmed: nothing written
    "sed 'R other; w out' f", // a file name, confirmed: nothing written
    "sed 'r /etc/hosts' f",
    "sed '1i header' f",
    "sed 's|/|\\\\|g' f",
    "sed -E 's/([0-9]+)/<\\1>/2' f",
    "sed 's/foo/bar/gI' f",
    "sed '\\,foo,d' f",
    "sed 'y/abc/xyz/' f",
    "sed '1~2d' f",
    "sed '0,/re/d' f",
    "sed '/x/,+2d' f",
    "sed '/x/,~4d' f",
    "sed '/x/I,/y/Md' f",
    "sed -n 'l 20' f",
    "sed 'q5' f",
    "sed '$!d' f",
    "sed -n '/^#/!p' f",
    "sed '# comment\np' f",
    "sed '1 { p ; q }' f",
    "sed -s -n '$p' a b",
    'sed --debug -n 1p f',
    "sed '1!G;h;$!d' f",
    "sed 'F;z;='",
    "sed 's/a/\\\n/g' f",
    "sed -n '/w/p' f",
    "sed -n 's/^version: //p' package.json",
    "sed -e 's/a/b/' -e 's/c/d/' f",
  ])('allows %j', async (command) => {
    expect(await allowed(command)).toBe(true);
  });
});
