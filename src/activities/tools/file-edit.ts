/**
 * FileEdit: replace an exact string in a file. The text must occur exactly once unless
 * `replace_all` is set, so an edit never lands somewhere the model did not mean. Reading
 * the current text and writing the new one go through the same verified descriptor (see
 * `contained-write.ts`), so the file judged is the file changed.
 */
import type { FileEditInput } from '../../shared/tools/schemas';
import { writeContained, type WriteDecision } from './contained-write';
import { fail, ok } from './outcome';
import type { ToolContext, ToolOutcome } from './types';
import { viewOf, writeRefusal } from './visible';

/** Non-overlapping occurrences of `needle` in `haystack` (needle not empty). */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/** The edit as a pure function of the current text; plain slicing, so `$&` stays literal. */
export function planEdit(current: string | null, input: FileEditInput, shown: string): WriteDecision & { replaced?: number } {
  if (current === null) return { kind: 'refuse', message: `File not found: ${shown}.` };
  if (current.includes('\0')) return { kind: 'refuse', message: `${shown} looks like a binary file; FileEdit only edits text.` };
  const count = countOccurrences(current, input.old_string);
  if (count === 0) {
    return { kind: 'refuse', message: `old_string was not found in ${shown}. Read the file again and copy the exact text, including whitespace and indentation.` };
  }
  if (count > 1 && input.replace_all !== true) {
    return {
      kind: 'refuse',
      message: `old_string occurs ${count} times in ${shown}. Include more surrounding lines so it matches exactly once, or set replace_all: true to replace all ${count}.`,
    };
  }
  const content = input.replace_all === true ? current.split(input.old_string).join(input.new_string) : replaceFirst(current, input.old_string, input.new_string);
  return { kind: 'write', content, replaced: input.replace_all === true ? count : 1 };
}

function replaceFirst(text: string, needle: string, replacement: string): string {
  const at = text.indexOf(needle);
  return text.slice(0, at) + replacement + text.slice(at + needle.length);
}

/** Runs FileEdit on parsed input; `touched` holds the canonical path written. */
export async function runFileEdit(input: FileEditInput, ctx: ToolContext): Promise<ToolOutcome> {
  if (input.old_string.length === 0) {
    return fail('old_string is empty. To create a file or replace all of it, use FileWrite; otherwise give the exact text to replace.');
  }
  if (input.old_string === input.new_string) {
    return fail('old_string and new_string are identical, so the edit would change nothing. Give the new text in new_string.');
  }
  let replaced = 0;
  const result = await writeContained({
    policy: ctx.writePolicy,
    root: ctx.root,
    filePath: input.file_path,
    refuse: (dir, canonical) => writeRefusal(viewOf(ctx), dir, canonical),
    create: false,
    readCurrent: true,
    decide: (current) => {
      const plan = planEdit(current, input, input.file_path);
      replaced = plan.replaced ?? 0;
      return plan;
    },
  });
  switch (result.kind) {
    case 'written':
      return ok(`Edited ${result.path}: replaced ${replaced} occurrence${replaced === 1 ? '' : 's'}.`, [result.path]);
    case 'not_found':
      return fail(`File not found: ${input.file_path}. Use Glob to find the right path, or FileWrite to create a new file.`);
    case 'denied':
    case 'refused':
      return fail(result.message);
  }
}
