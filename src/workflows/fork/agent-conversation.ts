/**
 * The conversation an agent's run holds: what `setUpFork` decided (the request context or its
 * reference, the opening messages, where the prefix held by reference ends) and the messages
 * appended since, with their chained digest. Absent until `open` (a worktree fork opens it
 * once its worktree exists); a read before then says why it waits.
 *
 * The agent (agent.ts) is one (it extends this class), so its callers read `agent.messages`,
 * `agent.base` and the rest as before; the agent configures its context window before opening it.
 */
import type { MessageParam } from '../../shared/messages-api/anthropic';
import { chainDigest, EMPTY_DIGEST } from '../../shared/base/hash';
import type { BlockPosition } from '../../shared/prefix/fork-messages';
import type { ContextSummary, PrefixRef } from '../../shared/prefix/prefix';
import type { RequestContext } from '../../shared/wire/messages';
import type { ForkSetup } from './setup';

/** The conversation part of the agent: what `setUpFork` decided, and the messages since. */
interface OpenConversation {
  readonly setup: ForkSetup;
  readonly messages: MessageParam[];
}

/** The open conversation of an agent's run (ForkAgent extends it). */
export abstract class AgentConversation {
  /** Named in the error of a read before the conversation is open. */
  abstract readonly agentId: string;
  /** Chained digest of `messages` (see ModelCallInput.digest). */
  digest = EMPTY_DIGEST;
  private conversation?: OpenConversation;

  /** Opens it with the opening messages of `setup`, chained onto the digest of the prefix it holds by reference. */
  protected openConversation(setup: ForkSetup): void {
    this.conversation = { setup, messages: [] };
    this.digest = setup.prefixRef?.digest ?? EMPTY_DIGEST;
    for (const message of setup.opening) this.append(message);
  }

  get opened(): boolean {
    return this.conversation !== undefined;
  }

  private held(): OpenConversation {
    // Only a query can get here early (the turn loop starts after `open`): say why it waits.
    if (!this.conversation) throw new Error(`Agent ${this.agentId} is still being set up (creating its worktree): its conversation is not open yet.`);
    return this.conversation;
  }

  /** Global index of `messages[0]`: the length of a prefix held by reference, else 0. */
  get base(): number {
    return this.held().setup.base;
  }
  get messages(): MessageParam[] {
    return this.held().messages;
  }
  /** The full request context when this run holds it; by reference, only `summary`. */
  get context(): RequestContext | undefined {
    return this.held().setup.context;
  }
  get summary(): ContextSummary {
    return this.held().setup.summary;
  }
  get prefixRef(): PrefixRef | undefined {
    return this.held().setup.prefixRef;
  }
  get sharedPrefixEnd(): BlockPosition | undefined {
    return this.held().setup.sharedPrefixEnd;
  }
  get usedParentSnapshot(): boolean {
    return this.held().setup.usedParentSnapshot;
  }
  get setup(): ForkSetup {
    return this.held().setup;
  }

  /** The model of the opened conversation; undefined before it is open. */
  protected get openedModel(): string | undefined {
    return this.conversation?.setup.summary.model;
  }

  /** Where its own messages start, as its set-up decided; undefined before it is open (and in older chains). */
  protected get openedOwnFrom(): number | undefined {
    return this.conversation?.setup.ownFrom;
  }

  /** Length of the whole conversation, prefix included. */
  get messageCount(): number {
    return this.conversation ? this.conversation.setup.base + this.conversation.messages.length : 0;
  }

  append(message: MessageParam): void {
    this.held().messages.push(message);
    this.digest = chainDigest(this.digest, message);
  }
}
