/**
 * A scripted team for the teams tests: a lead starts three teammates, broadcasts to them, and
 * starts a relay lead → a → b → c → lead whose every message carries the next one's script; the
 * last one makes the lead end the team with a structured `shutdown_request` to each teammate.
 *
 * Scripts are arranged so that the order messages arrive in never changes what is done: every
 * message's script is a single tool step (a message that arrives mid-script takes over after a
 * finished step, and messages that arrive together run one after the other), and the lead ends
 * with spare replies for however many notification batches its teammates' ends arrive in.
 */
import type { MessageParam } from '../../src/shared/messages-api/anthropic';
import { blocksOf } from '../../src/shared/messages-api/anthropic';
import { script, toolStep } from './tree';

export const TEAM = 'crew';
export const MATES = ['a', 'b', 'c'] as const;

const send = (to: string, message: unknown, summary?: string, modifiers = '') => toolStep('SendMessage', { to, message, ...(summary ? { summary } : {}) }, modifiers);

/** The broadcast: a harmless tool step (an error result), so it never ends a script that goes on after it. */
export const BROADCAST_TEXT = script('MSG lead#1 (broadcast): hello team.', toolStep('TaskOutput', { task_id: 'nothing-here' }));

/** The relay's four messages, lead → a → b → c → lead; the last ends the team. `slow`: each relay step is held that long in the model (so a crash can land in it). */
export function relay(slow = 0): { first: string; texts: string[] } {
  const hold = slow > 0 ? `@sleep ${slow} ` : '';
  const end = script(
    'MSG c#1: relay done, end the team.',
    `@tools ${JSON.stringify(MATES.map((m) => ({ name: 'SendMessage', input: { to: m, message: { type: 'shutdown_request', reason: 'done' } } })))}`,
    '@repeat 4 @reply team ended',
  );
  const toLead = script('MSG b#1: relay to c.', send('lead', end, 'relay back', hold));
  const toC = script('MSG a#1: relay to b.', send('c', toLead, 'relay', hold));
  const toB = script('MSG lead#2: relay to a.', send('b', toC, 'relay', hold));
  return { first: toB, texts: [toB, toC, toLead, end] };
}

/** The lead's prompt: three teammates, the broadcast, the relay's first message, then it waits. */
export function leadPrompt(opts: { slow?: number } = {}, prompt = (m: string) => script(`Teammate ${m}.`, '@reply ready')): string {
  const spawn = MATES.map((m) => ({ name: 'Agent', input: { description: `teammate ${m}`, name: m, team_name: TEAM, prompt: prompt(m) } }));
  return script('Lead.', `@tools ${JSON.stringify(spawn)}`, send('*', BROADCAST_TEXT, 'hello'), send('a', relay(opts.slow).first, 'relay'), '@reply waiting for the relay');
}

/** The texts of user messages in a conversation (messages are text blocks of user turns). */
export function userTexts(messages: MessageParam[]): string[] {
  return messages.flatMap((m) => (m.role === 'user' ? blocksOf(m) : [])).flatMap((b) => (b.type === 'text' ? [b.text] : []));
}

/** How many delivered messages in a conversation carry `marker` (the opening prompt does not count). */
export function deliveries(messages: MessageParam[], marker: string): number {
  return userTexts(messages.slice(1)).filter((t) => t.startsWith('[message ') && t.includes(marker)).length;
}

/** The markers (`MSG x#n`) of delivered messages, in the order they were delivered. */
export function deliveredMarkers(messages: MessageParam[]): string[] {
  return userTexts(messages.slice(1)).flatMap((t) => (t.startsWith('[message ') ? [...t.matchAll(/^MSG (\S+#\d+)/gm)].map((m) => m[1]!).slice(0, 1) : []));
}
