/**
 * The `prompt` frontmatter field: Claude Code's JSON agents carry their system prompt in it,
 * markdown agents in the body. A file may use either; when it has both, the body wins and
 * the field is reported, never silently dropped.
 */
import { z } from 'zod';
import { preview, type Report } from './lists';

/** No length limit of its own: the whole file is already bounded (MAX_AGENT_FILE_BYTES). */
const promptSchema = z.string().trim().min(1);

/** The agent's system prompt: the body, else a valid `prompt:` value, else empty. */
export function systemPromptOf(prompt: unknown, body: string, report: Report): string {
  if (prompt == null) return body;
  const parsed = promptSchema.safeParse(prompt);
  if (!parsed.success) {
    report({ field: 'prompt', outcome: 'ignored', problem: `prompt is ${preview(prompt)}; expected non-empty text`, fix: 'Write the system prompt after the closing "---" instead, or correct prompt:.' });
    return body;
  }
  if (body) {
    report({ field: 'prompt', outcome: 'ignored', problem: 'the file has both a prompt: field and a body; the body is the system prompt', fix: 'Delete prompt:, or move its text into the body.' });
    return body;
  }
  return parsed.data;
}
