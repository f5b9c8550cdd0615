/**
 * Closing a Temporal `Connection` without crashing the process. The SDK's retry interceptor
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
 * Connection options with the guard after the caller's interceptors (the SDK's retry
 * interceptor with its defaults when none are given). Every `Connection` forkflow makes is
 * made from these.
 */
export function closeSafeConnectionOptions<T extends ConnectionOptions>(options: T): T {
  return { ...options, interceptors: [...(options.interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())]), closedConnectionGuard] };
}
