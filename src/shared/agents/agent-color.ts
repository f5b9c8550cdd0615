/**
 * An agent's display colour (seed 001 `color`: a definition's, or ForkInput.color) where
 * readers find it without asking the workflow: the run's memo, set when it starts (no
 * workflow command, no history event per turn) and listed with it by visibility, so the
 * web view, `forkflow top` and `watch` show it. Pure.
 */
import { AGENT_COLORS, type AgentColor } from './agents';

/** The memo key holding the colour. */
export const COLOR_MEMO_KEY = 'forkflowColor';

/** The start memo entry of an agent with a colour; empty without one (its start is unchanged). */
export function colorMemo(v: { color?: AgentColor }): Record<string, AgentColor> {
  return v.color ? { [COLOR_MEMO_KEY]: v.color } : {};
}

/** The colour a listed run's memo holds, when it is one forkflow knows (a memo is anyone's to write). */
export function colorOfMemo(memo: Record<string, unknown> | undefined): AgentColor | undefined {
  const v = memo?.[COLOR_MEMO_KEY];
  return typeof v === 'string' && (AGENT_COLORS as readonly string[]).includes(v) ? (v as AgentColor) : undefined;
}
