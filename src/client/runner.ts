/**
 * What the dream and away APIs need of a forkflow client: its Temporal client, its task
 * queue and a synchronous fork. A narrow interface of its own, so those modules do not import
 * the client's index (which re-exports them) — no import circle on the client floor.
 */
import type { Client } from '@temporalio/client';
import type { ForkInputJson } from '../shared/wire/fork-input';
import type { ForkResult } from '../shared/wire/status';
import type { OutageGuard } from './outage';

/** A fork's input, plus `agentId` as a shorthand for `overrides.agentId` (also its workflow id). */
export type ForkParams = ForkInputJson & { agentId?: string };

export interface ForkRunner {
  readonly temporal: Client;
  readonly taskQueue: string;
  /** Repeatable calls ride out a Temporal outage through it (absent: no retries). */
  readonly outage?: OutageGuard;
  fork(params: ForkParams, opts: { mode: 'sync'; taskQueue?: string }): Promise<ForkResult>;
}
