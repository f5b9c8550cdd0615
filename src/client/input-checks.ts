/**
 * Checks the client makes before anything starts, where the workflow would refuse later (and
 * the refused fork would then show in listings and lineage): a fork from an agent's point
 * that changes its parent's model, system prompt or tools without saying it is a
 * counterfactual fork, and a parent snapshot holding an image or document the API would
 * refuse (src/shared/messages-api/media-limits.ts), named by its path.
 */
import { requestMediaIssues } from '../shared/messages-api/media-limits';
import type { MessageParam } from '../shared/messages-api/anthropic';
import { STANDARD_WINDOW } from '../shared/context/windows';
import { InvalidForkInputError } from './errors';

/** What a fork from a point asks to change. */
interface Overrides {
  model?: string;
  system?: unknown;
  tools?: unknown;
  counterfactual?: boolean;
}

/**
 * Refuses a fork from a point (its parent ran `parentModel`) that overrides the model, system
 * prompt or tools without `counterfactual: true`: a fork inherits them (its cache is there).
 */
export function refuseUnsaidCounterfactual(fork: Overrides, parentModel: string | undefined): void {
  if (fork.counterfactual) return;
  const changed: string[] = [];
  if (fork.model !== undefined && fork.model !== parentModel) changed.push(`model (${parentModel ?? 'the parent\'s'} → ${fork.model})`);
  if (fork.system !== undefined) changed.push('system');
  if (fork.tools !== undefined) changed.push('tools');
  if (changed.length === 0) return;
  throw new InvalidForkInputError([
    `${changed.join(', ')}: a fork inherits its parent's model, system prompt and tools (its prompt cache is there). ` +
      'To change them on purpose, say `counterfactual: true` (the fork then holds its own context, and its status names what it changed); otherwise remove the override.',
  ]);
}

/** Refuses a parent snapshot whose images or documents the API would refuse, each named by its path (`parent.messages.3.content.0`). */
export function refuseParentMedia(messages: readonly MessageParam[] | undefined, window: number = STANDARD_WINDOW, prefix = 'parent'): void {
  if (!messages) return;
  const issues = requestMediaIssues(messages, window);
  if (issues.length > 0) throw new InvalidForkInputError(issues.map((i) => `${prefix}.${i.path}: ${i.issue}`));
}
