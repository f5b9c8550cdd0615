/**
 * A started fork's handle: its result taken once, its status, messages, cancel, interrupt and
 * live events, each asked of the client that started it.
 */
import type { SendMessageArgs } from '../shared/wire/messages';
import type { ForkResult, ForkStatus } from '../shared/wire/status';
import type { StreamEvent } from '../shared/streams/stream-events';
import { ResultAlreadyTakenError } from './errors';
import type { InterruptAnswer, InterruptArgs } from './interrupt';
import type { StreamOptions } from './stream';

/** What a handle asks of the ForkflowClient that started it (named here so this file does not import the client's). */
export interface ForkHandleClient {
  result(agentId: string): Promise<ForkResult>;
  status(agentId: string): Promise<ForkStatus>;
  sendMessage(agentId: string, args: SendMessageArgs): Promise<'queued' | 'resumed'>;
  cancel(agentId: string): Promise<void>;
  interrupt(agentId: string, args: InterruptArgs): Promise<InterruptAnswer>;
  stream(agentId: string, opts: StreamOptions): AsyncGenerator<StreamEvent, void, undefined>;
}

/** A started fork. Its result can be taken once (`result()`); status and messages any time. */
export class ForkHandle {
  private taken = false;
  constructor(
    private readonly client: ForkHandleClient,
    readonly agentId: string,
    readonly runId: string | undefined,
  ) {}

  get workflowId(): string {
    return this.agentId;
  }

  /** Waits for the result; rides out a Temporal outage (the handle stays good). */
  async result(): Promise<ForkResult> {
    if (this.taken) throw new ResultAlreadyTakenError(this.agentId);
    this.taken = true;
    return this.client.result(this.agentId);
  }

  status(): Promise<ForkStatus> {
    return this.client.status(this.agentId);
  }

  sendMessage(args: SendMessageArgs): Promise<'queued' | 'resumed'> {
    return this.client.sendMessage(this.agentId, args);
  }

  cancel(): Promise<void> {
    return this.client.cancel(this.agentId);
  }

  /** Interrupts its turn in flight (not a cancel); see `ForkflowClient.interrupt`. */
  interrupt(args: InterruptArgs = {}): Promise<InterruptAnswer> {
    return this.client.interrupt(this.agentId, args);
  }

  /** Its live events (text, thinking, tool calls…) until `done`; see `ForkflowClient.stream`. */
  stream(opts: StreamOptions = {}): AsyncGenerator<StreamEvent, void, undefined> {
    return this.client.stream(this.agentId, opts);
  }
}
