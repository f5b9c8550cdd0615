/** Short renderings of free text for summaries, tables and prompts. Pure; workflow-safe. */

/** At most `max` characters; a cut is marked with "…". */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The first non-blank line, clipped. */
export function firstLine(text: string, max: number): string {
  return clip(text.split('\n').find((l) => l.trim()) ?? '', max);
}

/** All of it on one line (whitespace runs collapsed), clipped. */
export function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}
