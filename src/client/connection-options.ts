/**
 * How forkflow makes a Temporal `Connection` (`forkflowConnectionOptions`): closed without
 * crashing the process, and able to read a large tree's history.
 *
 * Closing without crashing. The SDK's retry interceptor
 * answers a failed call (UNAVAILABLE, RESOURCE_EXHAUSTED, ...) by arming a timer that starts
 * the next attempt; when the connection is closed before that timer fires, the attempt asks
 * the closed gRPC channel for a call, which throws "Channel has been shut down" from inside
 * the timer: an uncaught exception that ends a worker, a CLI or a test process that had only
 * closed its connection. It happens whenever a call is still retrying at close: one abandoned
 * by its caller (a raced long poll), or one a server restart failed a moment before shutdown.
 *
 * `closedConnectionGuard` sits after the retry interceptor: an attempt begun on a closed
 * channel ends at once with CANCELLED ("the connection was closed"), which is not retried, so
 * the waiting caller (if any) gets a rejection it can read and the process goes on.
 */
import { InterceptingCall, Metadata, status as GrpcStatus, type Interceptor, type InterceptingListener, type NextCall } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';

/** What an interceptor's next call is (grpc-js does not export the interface by name). */
type Call = ReturnType<NextCall>;

/** What grpc-js throws when a call is asked of a closed channel (internal-channel.ts). */
const CLOSED_CHANNEL = 'Channel has been shut down';

/** An attempt on a closed connection: it reports CANCELLED to whoever starts it, and sends nothing. */
class ClosedConnectionCall implements Call {
  constructor(private readonly path: string) {}
  start(_metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    // Asynchronously, as a real call's status arrives: the caller has set up its listener.
    setImmediate(() => listener?.onReceiveStatus?.({ code: GrpcStatus.CANCELLED, details: `the connection was closed before ${this.path} was retried`, metadata: new Metadata() }));
  }
  cancelWithStatus(): void {}
  getPeer(): string {
    return '';
  }
  sendMessageWithContext(context: { callback?: () => void }): void {
    context.callback?.();
  }
  sendMessage(): void {}
  startRead(): void {}
  halfClose(): void {}
  getAuthContext(): ReturnType<Call['getAuthContext']> {
    return null;
  }
}

/** A gRPC interceptor: an attempt begun after its connection closed ends CANCELLED instead of throwing. */
export const closedConnectionGuard: Interceptor = (options, nextCall) => {
  let call: Call;
  try {
    call = nextCall(options);
  } catch (err) {
    if (!(err instanceof Error && err.message === CLOSED_CHANNEL)) throw err;
    call = new ClosedConnectionCall(options.method_definition.path);
  }
  return new InterceptingCall(call);
};

/**
 * The largest response a forkflow connection takes. The SDK means to allow 128 MB, but names
 * the channel option without its `grpc.` prefix, so grpc-js keeps its 4 MB default: a page
 * of a large tree's root history (its thousand child starts, about 8 KB each) was refused
 * with RESOURCE_EXHAUSTED "Received message larger than max".
 */
export const MAX_RECEIVE_BYTES = 128 * 1024 * 1024;

/**
 * Connection options as forkflow makes every `Connection`: the guard after the caller's
 * interceptors (the SDK's retry interceptor with its defaults when none are given), and
 * responses up to MAX_RECEIVE_BYTES (unless the caller set a limit of its own).
 */
export function forkflowConnectionOptions<T extends ConnectionOptions>(options: T): T {
  return {
    ...options,
    channelArgs: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES, ...options.channelArgs },
    interceptors: [...(options.interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())]), closedConnectionGuard],
  };
}
