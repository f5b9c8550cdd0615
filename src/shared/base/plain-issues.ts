/**
 * zod issues in plain words, for errors a person reads (a rejected parent snapshot, a bad
 * budget). zod's own messages name schema internals ("Invalid input", "nonoptional") and,
 * for a union, report every branch; these lines name the field and say what it must be.
 */
import type { z } from 'zod';

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** `messages[2].content[0].id` rather than `messages.2.content.0.id`. */
export function formatPath(path: Path, root = '(input)'): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out || root;
}

/** How deep a branch's issues reach: the branch that got furthest is the one the caller meant. */
function depth(issues: readonly Issue[]): number {
  return Math.max(0, ...issues.map((i) => i.path.length));
}

/**
 * A union failed: keep only the branch that matched furthest. For `content` (a string or a
 * block list) an array input fails the string branch at depth 0 and the list branch deeper
 * in, and only the latter says what is actually wrong.
 */
function flatten(issue: Issue, prefix: Path): { path: Path; issue: Issue }[] {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    return best.flatMap((inner) => flatten(inner, [...prefix, ...issue.path]));
  }
  return [{ path: [...prefix, ...issue.path], issue }];
}

function quoteAll(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

function words(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      // zod does not keep the input by default; its message ends with what it received.
      if (issue.expected === 'nonoptional' || issue.message.endsWith('received undefined')) return 'is missing';
      if (issue.expected === 'array') return 'must be a list';
      return `must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    case 'invalid_value':
      return issue.values.length === 1 ? `must be ${quoteAll(issue.values)}` : `must be one of ${quoteAll(issue.values)}`;
    case 'invalid_union': {
      const options = (issue as { options?: unknown[] }).options;
      return options ? `must be one of ${quoteAll(options)}` : 'has none of the accepted shapes';
    }
    case 'too_small':
      if (issue.origin === 'string' && Number(issue.minimum) === 1) return 'must not be empty';
      if (issue.origin === 'array') return `must have at least ${issue.minimum} item(s)`;
      return `must be ${issue.inclusive ? 'at least' : 'more than'} ${issue.minimum}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${issue.maximum} characters long`;
      if (issue.origin === 'array') return `must have at most ${issue.maximum} item(s)`;
      return `must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    case 'unrecognized_keys':
      return `has fields forkflow does not accept here: ${issue.keys.join(', ')}`;
    default:
      return issue.message;
  }
}

/** One line per problem: `field: what it must be`. `root` names the value itself (an empty path). */
export function plainIssues(error: z.ZodError, root?: string): string[] {
  const lines = error.issues.flatMap((i) => flatten(i, [])).map(({ path, issue }) => `${formatPath(path, root)}: ${words(issue)}`);
  return [...new Set(lines)];
}
