/**
 * FileWrite: create a file or replace its whole content, only through the containment
 * module, so the write policy (workspace root, memory directory, or none) always holds.
 */
import type { FileWriteInput } from '../../shared/tools/schemas';
import { writeContained } from './contained-write';
import { fail, ok } from './outcome';
import type { ToolContext, ToolOutcome } from './types';
import { viewOf, writeRefusal } from './visible';

/** Runs FileWrite on parsed input; `touched` holds the canonical path written. */
export async function runFileWrite(input: FileWriteInput, ctx: ToolContext): Promise<ToolOutcome> {
  const result = await writeContained({
    policy: ctx.writePolicy,
    root: ctx.root,
    filePath: input.file_path,
    refuse: (dir, canonical) => writeRefusal(viewOf(ctx), dir, canonical),
    create: true,
    readCurrent: false,
    decide: () => ({ kind: 'write', content: input.content }),
  });
  switch (result.kind) {
    case 'written':
      return ok(`${result.created ? 'Created' : 'Overwrote'} ${result.path} (${result.bytes} bytes).`, [result.path]);
    case 'denied':
    case 'refused':
      return fail(result.message);
    case 'not_found':
      // Only reachable when not creating; kept for exhaustiveness.
      return fail(`File not found: ${result.path}.`);
  }
}
