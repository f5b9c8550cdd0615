/**
 * Cache-break watch on every model call of an agent (the rules: src/shared/prefix/cache-break.ts).
 * This class is the only writer of the agent's cache-break state: the latest break, how many
 * there were, and the previous request a later call is judged against. That state crosses
 * continue-as-new and resumes (carried state `cache`), so counts and the expectation survive.
 */
import { log } from '@temporalio/workflow';
import type { Usage } from '../../shared/messages-api/anthropic';
import type { ModelCallResult } from '../../shared/wire/activity-io';
import { COMPACTED, diagnoseFirstTurn, diagnoseLaterTurn, previousRequest, type CacheBreak, type CarriedCache, type Diagnosis, type PreviousRequest, type SnapshotHashes } from '../../shared/prefix/cache-break';
import { workflowNow } from '../clock';
import { cacheBroke } from '../metrics';
import type { ForkSetup } from './setup';

/** Who is asking, for the log line. */
interface Subject {
  agentId: string;
  forkLabel: string;
}

export class CacheWatch {
  private latestBreak?: CacheBreak;
  private count = 0;
  private previous?: PreviousRequest;
  /** The context was compacted since the previous request (its miss is expected, and named so). */
  private compactedSince = false;

  /** The latest break, if any. */
  get latest(): CacheBreak | undefined {
    return this.latestBreak;
  }
  get breaks(): number {
    return this.count;
  }
  /** The previous request's message count (asked of the next call, see ModelCallInput.prefixAt). */
  get prefixAt(): number | undefined {
    return this.previous?.messages;
  }

  /**
   * Judges one call: a fork's first against its parent's prefix, any later one against this
   * agent's previous request. `startedAt`: workflow time when the call was scheduled.
   */
  check(who: Subject, setup: ForkSetup, turn: number, result: ModelCallResult, startedAt: number): void {
    const diagnosis = this.previous
      ? diagnoseLaterTurn(this.previous, result.usage, result.request, startedAt)
      : turn === 1 && setup.usedParentSnapshot
        ? diagnoseFirstTurn(result.usage, setup.parentHashes, forkSide(setup, result))
        : undefined;
    // Without the request's facts (an old history, a reused request) the next call has nothing to compare with.
    this.previous = result.request ? previousRequest(result.request, result.usage, workflowNow()) : undefined;
    // A request after a compaction starts a new prefix on purpose; so does a fork's first from a compacted parent.
    const compacted = this.compactedSince || (turn === 1 && setup.prefixRef?.window !== undefined && (setup.prefixRef.window.compactions > 0));
    this.compactedSince = false;
    if (diagnosis) this.record(who, turn, compacted ? { ...diagnosis, reason: COMPACTED } : diagnosis, result.usage);
  }

  /** A compaction happened: the next call's miss is named `compacted`. */
  compacted(): void {
    this.compactedSince = true;
  }

  private record(who: Subject, turn: number, d: Diagnosis, usage: Usage): void {
    this.latestBreak = { ratio: d.ratio, reason: d.reason, turn };
    this.count += 1;
    cacheBroke(d.reason);
    log.warn('fork.cache_break_detected', {
      event: 'fork.cache_break_detected',
      agentId: who.agentId,
      forkLabel: who.forkLabel,
      turn,
      ratio: d.ratio,
      reason: d.reason,
      cacheReadInputTokens: usage.cacheReadInputTokens,
      cacheCreationInputTokens: usage.cacheCreationInputTokens,
      inputTokens: usage.inputTokens,
    });
  }

  carry(): CarriedCache {
    return { breaks: this.count, ...(this.latestBreak ? { latest: this.latestBreak } : {}), ...(this.previous ? { previous: this.previous } : {}), ...(this.compactedSince ? { compacted: true } : {}) };
  }

  adopt(state: CarriedCache | undefined): void {
    if (!state) return;
    this.count = state.breaks;
    this.latestBreak = state.latest;
    this.previous = state.previous;
    this.compactedSince = state.compacted === true;
  }
}

/**
 * The fork's side of a first-call comparison: the context it really sent (measured by the
 * model activity) with the prefix decided at setup. A by-reference fork's prefix is its
 * parent's messages, proven by digest, so only its context can differ from what the parent
 * recorded. Old histories without measured facts keep the setup's hashes.
 */
function forkSide(setup: ForkSetup, result: ModelCallResult): SnapshotHashes | undefined {
  const prefix = setup.forkHashes?.prefix;
  const sent = result.request;
  if (!sent || prefix === undefined) return setup.forkHashes;
  return { system: sent.system, tools: sent.tools, model: sent.model, thinking: sent.thinking, prefix };
}
