/**
 * Reads the list fields of an agent file (`tools`, `allowed-tools`, `disallowedTools`,
 * `skills`): a YAML list or a comma-separated string, checked entry by entry so one bad
 * entry does not cost the whole list.
 */
import type { z } from 'zod';
import type { AgentProblem } from '../../shared/agents/agents';

/** Records a problem for the file being built. */
export type Report = (problem: Omit<AgentProblem, 'file'>) => void;

/** `allow` and `deny` are tool lists; they differ in how they fail closed. */
export type ListKind = 'allow' | 'deny' | 'skills';

/** `Bash(git *)`: a permission rule on a tool's arguments, which forkflow cannot enforce. */
const ARGUMENT_RULE = /^([A-Za-z0-9_.:-]+)\s*\(.*\)$/s;

/** A value as it appears in a problem message: JSON, cut short. */
export function preview(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * The valid, distinct entries of a list field. An entry that is not a name is reported and
 * left out. When the value is not a list at all, a tool field fails closed: an allow list
 * becomes empty and a deny list becomes `*`, so the agent gets no tools rather than
 * silently getting every tool. A bad `skills` value is just left out (`undefined`).
 */
export function parseList(
  field: string,
  value: unknown,
  entrySchema: z.ZodType<string>,
  kind: ListKind,
  report: Report,
): string[] | undefined {
  const items: unknown[] | undefined = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (!items) {
    if (kind === 'skills') {
      report({ field, outcome: 'ignored', problem: `${field} is ${preview(value)}; expected a list of skill names`, fix: `Write e.g. ${field}: [review, testing], or delete the line.` });
      return undefined;
    }
    report({
      field,
      outcome: 'restricted',
      problem: `${field} is ${preview(value)}; expected a list of tool names or a comma-separated string`,
      fix: `Write e.g. ${field}: Read, Grep. Until then this agent gets no tools.`,
    });
    return kind === 'allow' ? [] : ['*'];
  }

  const names: string[] = [];
  for (const item of items) {
    const entry = typeof item === 'string' ? item.trim() : item;
    // Trailing commas and blank list items are harmless.
    if (entry === '') continue;
    const parsed = entrySchema.safeParse(entry);
    if (parsed.success) {
      if (!names.includes(parsed.data)) names.push(parsed.data);
      continue;
    }
    const tool = kind !== 'skills' && typeof entry === 'string' ? ARGUMENT_RULE.exec(entry)?.[1] : undefined;
    if (tool && kind === 'deny') {
      // Denying part of a tool can only be honoured by denying all of it.
      if (!names.includes(tool)) names.push(tool);
      report({
        field,
        outcome: 'restricted',
        problem: `"${entry as string}" restricts ${tool} by its arguments, which forkflow cannot enforce, so all of ${tool} is denied`,
        fix: `Write ${tool} to deny it fully, or delete the entry to allow it.`,
      });
    } else if (tool) {
      report({
        field,
        outcome: 'ignored',
        problem: `"${entry as string}" allows ${tool} only for some arguments, which forkflow cannot enforce, so ${tool} is not allowed`,
        fix: `Write ${tool} to allow it fully, or delete the entry.`,
      });
    } else {
      const what = kind === 'skills' ? 'a skill name' : 'a tool name (letters, digits, _ . : -; * alone or at the end as a wildcard)';
      report({ field, outcome: 'ignored', problem: `${preview(entry)} in ${field} is not ${what}`, fix: 'Correct or delete the entry.' });
    }
  }
  return names;
}
