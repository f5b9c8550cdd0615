/** Quoting source text for reason messages, shared by the word and expansion modules. */

/** `\``quote\`` a piece of source for a reason message, keeping it short. */
export function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return '`' + (flat.length > 60 ? flat.slice(0, 57) + '...' : flat) + '`';
}
