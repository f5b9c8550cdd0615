/**
 * Which variables a read-only command may set (`X=1 cmd`, `X=1; ...`, `env X=1 cmd`,
 * `for X in ..`, `read X`). Setting a variable is harmless unless the shell or a
 * program gives it meaning: PATH chooses what runs, LD_PRELOAD injects code, PAGER and
 * GIT_* make git execute things (and override the protective values the Bash tool
 * sets), IFS and PS4 change how later text is read, HOME and XDG_CONFIG_HOME choose
 * which configuration git reads, TMPDIR where programs write, and an already exported
 * variable reaches every child. We cannot know what is exported, so this is a positive
 * list: ordinary lower-case shell variables (except the few bash and network tools give
 * meaning to) and locale and display settings. Everything else is refused with a reason.
 */
import { deny } from './deny';

const SAFE_UPPER = new Set([
  'LANG', 'LANGUAGE', 'TZ', 'COLUMNS', 'LINES', 'NO_COLOR', 'CLICOLOR', 'CLICOLOR_FORCE', 'FORCE_COLOR', 'TERM',
  'TIME_STYLE', 'QUOTING_STYLE', 'GREP_COLOR', 'GREP_COLORS', 'LS_COLORS',
]);

/** Lower-case names that still mean something to bash (history, job control) or to network tools. */
const UNSAFE_LOWER = new Set(['histchars', 'auto_resume']);

/** Examples named in the reason, so the model understands what the rule is about. */
const KNOWN_DANGEROUS = /^(PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|IFS|PS[0-4]|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|BASH_\w*|CDPATH|GLOBIGNORE|GIT_\w*|PAGER|MANPAGER|EDITOR|VISUAL|HOME|XDG_\w*|TMPDIR|LESS\w*|NODE_OPTIONS|PYTHON\w*|PERL5\w*|RUBYOPT|SSH_\w*|GNUPGHOME|GCONV_PATH|LOCPATH|NLSPATH|TERMINFO\w*|RIPGREP_CONFIG_PATH|JQ_LIBRARY_PATH|AWKPATH|AWKLIBPATH|POSIXLY_CORRECT)$/;

/** Throw unless assigning `name` cannot change what runs or how it behaves. */
export function checkAssignable(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    deny(`assignment to \`${name}\` is not allowed (only plain variable names)`);
  }
  if (/^[a-z_][a-z0-9_]*$/.test(name) && !UNSAFE_LOWER.has(name) && !name.endsWith('_proxy')) return;
  if (SAFE_UPPER.has(name) || /^LC_[A-Z]+$/.test(name)) return;
  if (KNOWN_DANGEROUS.test(name)) {
    deny(`setting \`${name}\` can change which program runs or make a program execute code; run the command without it`);
  }
  deny(`setting the environment variable \`${name}\` is not allowed in read-only mode (only lower-case shell variables and locale settings are); run the command without it`);
}
