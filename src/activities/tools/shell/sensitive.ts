/**
 * Words that point at the worker itself, refused whatever the program: a process's
 * environment (`/proc/<pid>/environ` holds the worker's API keys) and anything else under
 * `/proc` but a few machine facts and the command's own process, named directly, through
 * `..`, or by a glob at the top of the filesystem. Inside
 * the OS sandbox these are out of reach anyway (its /proc shows only its own processes);
 * this is the classifier's answer where a command runs without the sandbox.
 */
import { deny } from './deny';
import { quote, type ShellWord } from './words';

const PROC = /(^\/+|(^|\/)\.\.\/+(\.\.\/+)*)proc(\/|$)/;
/** /proc entries about the machine, or about the command's own process (its environment is scrubbed, and `environ` is refused anyway). */
const PROC_HARMLESS = /^\/proc\/((cpuinfo|meminfo|loadavg|version|uptime|swaps|filesystems|stat)$|(self|thread-self|\$\$|\$\{\$\}|\$BASHPID)(\/|$))/;

/** Whether a path component (maybe a glob) could name a file called `environ`. */
function mayBeEnviron(component: string): boolean {
  if (component === 'environ') return true;
  // A bare `*` or `*.ts` names workspace files; a glob spelling part of the name is the worry.
  if (!/[*?[]/.test(component) || (component.match(/[A-Za-z]/g) ?? []).length < 2) return false;
  const pattern = component.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  try {
    return new RegExp(`^${pattern}$`).test('environ');
  } catch {
    return true; // a bracket expression we cannot read: assume the worst
  }
}

/** Refuses `word` when it could name /proc or a process environment. */
export function checkSensitiveWord(word: ShellWord): void {
  const texts = word.kind === 'static' ? [word.value, word.text] : [word.text];
  for (const text of texts) {
    // Quotes and backslashes do not change which file a word names.
    const bare = text.replace(/["'\\]/g, '');
    if (bare.split('/').some(mayBeEnviron)) deny(`${quote(word.text)} names a process environment, which holds the worker's secrets; it is not read here`);
    if (PROC.test(bare) && !PROC_HARMLESS.test(bare.replace(/^\/+/, '/'))) deny(`${quote(word.text)} is under /proc, which describes the worker's own processes; it is not read here`);
    if (/^\/+[^/]*[*?[]/.test(bare)) deny(`${quote(word.text)} globs at the top of the filesystem (it could reach /proc); name the directory`);
  }
}

/** `ps` with the BSD `e` flag (or an `environ` format) prints every process's environment. */
export function checkPsArgs(args: readonly ShellWord[]): void {
  for (const arg of args) {
    const text = arg.kind === 'static' ? arg.value : arg.text;
    if (!text.startsWith('-') && /e/.test(text)) deny(`\`ps ${text}\` shows processes' environments (the BSD \`e\` flag), which hold the worker's secrets; use \`ps aux\` or \`ps -ef\``);
    if (arg.kind === 'dynamic') deny(`\`ps\` with a computed argument ${quote(arg.text)} could ask for environments; write its options literally`);
  }
}
