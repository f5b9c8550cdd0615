/**
 * One zod schema per tool: it yields the JSON Schema the model sees, the parser the
 * activity runs, and the TypeScript type. Names are provider-neutral and arguments flat.
 * Workflow-safe (the workflow offers these definitions when a fork has no snapshot).
 */
import { z } from 'zod';
import type { ToolDefinition } from '../messages-api/anthropic';
import { schemaOnce } from '../base/schema-once';

const filePath = z
  .string()
  .min(1)
  .describe('Path of the file: absolute, or relative to the workspace root.');

/** Read as offered before it returned images and PDFs (runs recorded then replay offering it). */
const readInputText = schemaOnce('tools/schemas#readInputText', () => z.strictObject({
  file_path: filePath,
  offset: z.number().int().min(1).optional().describe('First line to read, 1-based. Default 1.'),
  limit: z.number().int().min(1).max(5000).optional().describe('Number of lines to read. Default 2000.'),
}));

export const readInput = schemaOnce('tools/schemas#readInput', () => readInputText.extend({
  pages: z.string().regex(/^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/, 'must be a page list like "1-3" or "2,5-7"').optional().describe('PDF files only: the pages to read, e.g. "1-3" (1-based). Default: all (at most 100).'),
}));

export const globInput = schemaOnce('tools/schemas#globInput', () => z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern such as "src/**/*.ts".'),
  path: z.string().min(1).optional().describe('Directory to search in. Default: the workspace root.'),
}));

export const grepInput = schemaOnce('tools/schemas#grepInput', () => z.strictObject({
  pattern: z.string().min(1).describe('Regular expression (JavaScript syntax) to search for.'),
  path: z.string().min(1).optional().describe('File or directory to search. Default: the workspace root.'),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts".'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('"content" shows matching lines, "files_with_matches" (default) lists files, "count" counts per file.'),
  case_insensitive: z.boolean().optional().describe('Match case-insensitively.'),
  context: z.number().int().min(0).max(20).optional().describe('Lines of context around each match (content mode).'),
  head_limit: z.number().int().min(1).optional().describe('Return at most this many lines/files.'),
}));

export const bashInput = schemaOnce('tools/schemas#bashInput', () => z.strictObject({
  command: z.string().min(1).describe('The shell command to run (bash).'),
  timeout_ms: z.number().int().min(100).max(600_000).optional().describe('Kill the command after this long. Default 120000.'),
  description: z.string().optional().describe('What the command does, in a few words.'),
  run_in_background: z.boolean().optional().describe('Start it as a background task (a long build or test run) and return at once: you get a task notification when it ends or stalls; TaskOutput reads its output, TaskStop stops it. Default time limit one hour (timeout_ms sets another).'),
  stall_ms: z.number().int().min(1_000).max(86_400_000).optional().describe('With run_in_background: notify me when it has written nothing for this long. Default 300000.'),
}));

export const fileEditInput = schemaOnce('tools/schemas#fileEditInput', () => z.strictObject({
  file_path: z.string().min(1).describe('Absolute path of the file to edit.'),
  old_string: z.string().describe('Exact text to replace; must occur exactly once unless replace_all is set.'),
  new_string: z.string().describe('Replacement text.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence.'),
}));

export const fileWriteInput = schemaOnce('tools/schemas#fileWriteInput', () => z.strictObject({
  file_path: z.string().min(1).describe('Absolute path of the file to create or overwrite.'),
  content: z.string().describe('The whole new content of the file.'),
}));

export const toolInputSchemas = {
  Read: readInput,
  Glob: globInput,
  Grep: grepInput,
  Bash: bashInput,
  FileEdit: fileEditInput,
  FileWrite: fileWriteInput,
} as const;

export type BuiltinToolName = keyof typeof toolInputSchemas;
export type ReadInput = z.infer<typeof readInput>;
export type GlobInput = z.infer<typeof globInput>;
export type GrepInput = z.infer<typeof grepInput>;
export type BashInput = z.infer<typeof bashInput>;
export type FileEditInput = z.infer<typeof fileEditInput>;
export type FileWriteInput = z.infer<typeof fileWriteInput>;

export const READ_ONLY_TOOLS: readonly BuiltinToolName[] = ['Read', 'Glob', 'Grep'];

const READ_TEXT_DESCRIPTION = 'Read a text file from the workspace, with line numbers. Use offset/limit for large files.';

const descriptions: Record<BuiltinToolName, string> = {
  Read: 'Read a file from the workspace: text with line numbers (offset/limit for large files); images (.png, .jpg, .gif, .webp) and PDFs (pages to pick some) are shown to you as they are.',
  Glob: 'List files matching a glob pattern, newest first.',
  Grep: 'Search file contents with a regular expression.',
  Bash: 'Run a shell command in the workspace and return its output.',
  FileEdit: 'Replace an exact string in a file.',
  FileWrite: 'Create or overwrite a file.',
};

export function isBuiltinTool(name: string): name is BuiltinToolName {
  return Object.prototype.hasOwnProperty.call(toolInputSchemas, name);
}

/**
 * The Anthropic tool definition of a built-in tool (stable bytes: the cache depends on them).
 * `textRead`: Read as it was offered before it returned images and PDFs (patch
 * `forkflow-read-media-1`: a run recorded then replays offering the same bytes).
 */
export function toolDefinition(name: BuiltinToolName, opts: { textRead?: boolean } = {}): ToolDefinition {
  const text = name === 'Read' && opts.textRead === true;
  const schema = z.toJSONSchema(text ? readInputText : toolInputSchemas[name], { target: 'draft-7' }) as Record<string, unknown>;
  delete schema.$schema;
  return { name, description: text ? READ_TEXT_DESCRIPTION : descriptions[name], input_schema: { type: 'object', ...schema } };
}
