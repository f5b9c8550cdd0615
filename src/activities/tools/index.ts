/**
 * The built-in tools as plain Node functions, one entry point for all of them. A Temporal
 * activity wraps `runBuiltinTool`; tests call it directly on temporary workspaces.
 */
import { toolInputSchemas, isBuiltinTool, type BuiltinToolName } from '../../shared/tools/schemas';
import { detectEnvelope, formatIssues } from './args';
import { runBash } from './bash';
import { runFileEdit } from './file-edit';
import { runFileWrite } from './file-write';
import { runGlob } from './glob';
import { runGrep } from './grep';
import { fail, isAbortError, messageOf, ToolAbortError, throwIfAborted } from './outcome';
import { runRead } from './read';
import type { ToolContext, ToolOutcome } from './types';

// The public surface: what an activity needs to run tools and audit memory forks.
export type { ShellClassifier, ShellVerdict, ToolContext, ToolOutcome, WritePolicy } from './types';
export { ToolAbortError, isAbortError } from './outcome';
export { auditTouchedPaths, type PathEscape, type EscapeReason } from './audit';
export { pinWritePolicy } from './paths';

const KNOWN = Object.keys(toolInputSchemas).join(', ');

async function dispatch(name: BuiltinToolName, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const schema = toolInputSchemas[name];
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return fail(formatIssues(name, schema, parsed.error));
  // Each case re-narrows `parsed.data` through its own schema's type.
  switch (name) {
    case 'Read':
      return runRead(parsed.data as Parameters<typeof runRead>[0], ctx);
    case 'Glob':
      return runGlob(parsed.data as Parameters<typeof runGlob>[0], ctx);
    case 'Grep':
      return runGrep(parsed.data as Parameters<typeof runGrep>[0], ctx);
    case 'Bash':
      return runBash(parsed.data as Parameters<typeof runBash>[0], ctx);
    case 'FileEdit':
      return runFileEdit(parsed.data as Parameters<typeof runFileEdit>[0], ctx);
    case 'FileWrite':
      return runFileWrite(parsed.data as Parameters<typeof runFileWrite>[0], ctx);
  }
}

/**
 * Runs one built-in tool call. `rawInput` is the model's `tool_use.input`, unvalidated.
 *
 * Never throws for anything the model can cause: unknown tools, malformed or wrapped
 * arguments, missing files, denied paths, timeouts and I/O errors all come back as
 * `{ isError: true, content }` with a message saying what to do instead. It throws only
 * when `ctx.signal` aborts (an Error named `AbortError`), after stopping its work.
 *
 * @example
 * const out = await runBuiltinTool('Read', { file_path: 'README.md' },
 *   { root: '/work/repo', signal, heartbeat: () => {}, writePolicy: { kind: 'workspace' } });
 */
export async function runBuiltinTool(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  throwIfAborted(ctx.signal);
  if (!isBuiltinTool(name)) return fail(`Unknown tool "${name}". The built-in tools are ${KNOWN}.`);
  const envelope = detectEnvelope(rawInput);
  if (envelope !== undefined) {
    return fail(`Denied: ${name} arguments must be flat top-level fields, but ${envelope}. Call ${name} again with the fields themselves (e.g. {"file_path": ...}), not wrapped.`);
  }
  try {
    return await dispatch(name, rawInput, ctx);
  } catch (err) {
    if (isAbortError(err) || ctx.signal.aborted) throw isAbortError(err) ? err : new ToolAbortError();
    return fail(`${name} failed: ${messageOf(err)}`);
  }
}
