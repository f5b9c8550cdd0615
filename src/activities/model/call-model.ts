/**
 * The model activity: one Anthropic Messages API call per turn. Its input is a reference;
 * the conversation and request context come from the workflow (see ../conversation.ts).
 * It streams (heartbeating on every event), passes the activity's AbortSignal to the
 * request, and returns the assistant message in request-param form plus usage.
 */
import { randomBytes } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import type { ModelCallInput, ModelCallResult } from '../../shared/wire/activity-io';
import { CALL_KEY_HEADER, CALL_PROOF_HEADER } from '../../shared/providers/model-gateway';
import { buildMessagesRequest } from '../../shared/messages-api/request';
import { lastBreakpointTtl, requestFacts, type RequestFacts } from '../../shared/prefix/cache-break';
import { keepAliveMaxTokens, ttlMsAt } from '../../shared/prefix/cache-warmth';
import { chainUnmarkedNative } from '../node-hash';
import type { ConversationSource } from '../conversation';
import { startHeartbeat } from '../heartbeat';
import { capAttempts, classifyModelError } from './errors';
import { recordModelFailure, recordModelSuccess } from '../metrics';
import { estimateRequestTokens } from '../../shared/messages-api/request-tokens';
import { checkMedia, mediaRulesOf } from './media-check';
import { viewMessages } from '../../shared/context/view';
import type { BlockPosition } from '../../shared/prefix/fork-messages';
import { checkFits, measureRequest, replyUsage, withContext } from './context';
import { charged, withinBudget } from './budget-fit';
import type { LedgerClient } from '../tree';
import type { CallKey, ResponseStore } from './response-store';
import { callKeyDigest, cancelAtGateway, cancelsUpstream, handedOver, keep, kept } from './exactly-once';
import { toParamBlock } from './param-blocks';

// Their long-standing home: compaction, tests and benches import them from here.
export { callKeyDigest, cancelAtGateway, cancelsUpstream, keep, kept } from './exactly-once';
export { toParamBlock } from './param-blocks';
import { LivePublisher, type LiveStreamOptions } from './live-publisher';
import { callViaBatch } from './batch-call';
import { anthropicBatches, batchApiOf } from './batch-api';
import { openaiBatches } from './providers/openai-batches';
import { Batcher } from './batcher';

/** The failure type of a batched call left unanswered under `batchFallback: 'fail'`. */
export const BATCH_NOT_ANSWERED = 'BatchNotAnswered';
import { callChatCompletions } from './providers/openai-call';
import { providerFor, throughGateway, type ProviderClients } from './providers/registry';
import { withoutUnsignedThinking } from './providers/reasoning';

export interface ModelDeps {
  anthropic: Anthropic;
  /**
   * The worker's providers by name (src/worker/providers.ts): a call whose input names a
   * provider goes to that provider's client; a call naming none goes to `anthropic`.
   */
  providers?: ProviderClients;
  conversations: ConversationSource;
  /** Stream responses (default). Off only for endpoints without SSE. */
  stream?: boolean;
  /** Where a response that arrived is kept until the workflow has it (exactly-once billing). */
  responses?: ResponseStore;
  /**
   * Aborted when this worker starts to stop (SIGTERM): a call in flight is handed back at
   * once, before the SDK's own shutdown cancels it, and another worker retries it.
   */
  stopping?: AbortSignal;
  /**
   * The model gateway `anthropic` points at (src/gateway): each call then carries its call
   * key, so the gateway can finish a call whose worker dies and replay it to the retry; a
   * call cancelled on purpose is stopped there too.
   */
  gateway?: string;
  /** The tree ledger at a tree's root (calls with `input.budget.ledger` reserve and charge there). */
  ledger?: LedgerClient;
  /** Tests only: the offline model's clock runs this many times faster (results then report `ttlMs`). */
  clockScale?: number;
  /** Live deltas to the fork's stream subscribers (issue 15); on by default. */
  liveStream?: LiveStreamOptions;
  /** Delivery `batch`: how often a submitted Message Batch is polled, in ms (default 30 s). */
  batchPollMs?: number;
  /** Delivery `batch`: how long a call waits for others to share its batch, in ms (default 1 s). */
  batchWindowMs?: number;
  /** Delivery `batch`: a batch gathered this many requests goes before its window ends (default 1,000). */
  batchMaxRequests?: number;
  /**
   * Check a request's size with the provider's `count_tokens` when the estimate is near its
   * limit (default on; off for endpoints without it: the estimate decides alone).
   */
  countTokens?: boolean;
}

/** A position in the whole conversation, as a position in the part the request sends (from `from`). */
function shifted(at: BlockPosition | undefined, from: number): BlockPosition | undefined {
  return at && at.messageIndex >= from ? { ...at, messageIndex: at.messageIndex - from } : undefined;
}

/**
 * The request for this call, from the conversation the workflow holds, and what it sends (for
 * cache-break diagnosis). A managed context sends the conversation from its latest compaction
 * boundary on, with cleared tool results (src/shared/context/view.ts).
 */
export async function requestFor(deps: Pick<ModelDeps, 'conversations'>, input: ModelCallInput): Promise<{ body: MessagesRequest; facts: RequestFacts }> {
  const [held, all] = await Promise.all([deps.conversations.context(input.contextFrom ?? input.run, input.contextKey), deps.conversations.forModelCall(input)]);
  const context = input.maxTokens ? { ...held, maxTokens: input.maxTokens } : held;
  const from = input.context?.from ?? 0;
  const messages = viewMessages(all, input.context);
  const sharedPrefixEnd = shifted(input.sharedPrefixEnd, from);
  const made = buildMessagesRequest(context, messages, { ...(sharedPrefixEnd ? { sharedPrefixEnd } : {}), ...(input.cacheTtl ? { ttl: input.cacheTtl } : {}) });
  // The agent's effort (ForkInput.effort); an agent without one sends the request it always did.
  const built = input.effort ? { ...made, output_config: { effort: input.effort } } : made;
  // A keep-alive only re-reads the prefix: the least output the API allows.
  const body = input.keepAlive ? { ...built, max_tokens: keepAliveMaxTokens(built) } : built;
  return { body, facts: requestFacts(context, body, input.prefixAt, chainUnmarkedNative) };
}

export function createModelActivities(deps: ModelDeps) {
  // One per worker: batched calls of every agent here share batches and their polls.
  const batcher = new Batcher({ pollMs: deps.batchPollMs, windowMs: deps.batchWindowMs, maxRequests: deps.batchMaxRequests });
  return {
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      const ctx = Context.current();
      const { workflowExecution, namespace, activityId } = ctx.info;
      // Outside a workflow (a standalone activity) there is no run to key a response by.
      const key: CallKey | undefined = workflowExecution
        ? { namespace, workflowId: workflowExecution.workflowId, runId: workflowExecution.runId, activityId, turn: input.turn }
        : undefined;
      // Beating starts before the first I/O: fetching a large conversation can itself take
      // longer than the heartbeat timeout, and a silent activity would be retried for it.
      const progress: { turn: number; phase: 'fetching conversation' | 'calling model' | 'waiting for batch'; events: number; batch?: string } = { turn: input.turn, phase: 'fetching conversation', events: 0 };
      const stopHeartbeat = startHeartbeat(() => ({ ...progress }));
      let handing: Promise<void> | undefined;
      // Only a retry can find an earlier attempt's response or request (a call's key is its run
      // and activity id); a first attempt drops the run's earlier turns beside the call instead.
      const retry = ctx.info.attempt > 1;
      const settling = !retry && deps.responses && key ? deps.responses.settle(key).catch(() => undefined) : undefined;
      // Deltas to stream subscribers; a stream that fails never fails the call (live-publisher.ts).
      const live = deps.stream !== false ? LivePublisher.open(input, deps.liveStream) : undefined;
      try {
        // The provider is the input's, the same on every attempt; an unknown one fails at once.
        const provider = providerFor(deps.providers, input.provider);
        const anthropic = provider?.kind === 'anthropic' ? provider.anthropic : deps.anthropic;
        // An OpenAI-compatible provider: Chat Completions through its adapter (providers/openai-call.ts).
        const chat = provider?.kind === 'openai-compatible' ? provider.openai : undefined;
        const viaGateway = throughGateway(deps.gateway, provider, deps.anthropic);
        // An earlier attempt left its request (and maybe got the whole response and then lost
        // its worker, or its server): hand that response back instead of paying twice.
        const handed = retry ? await handedOver(deps.responses, key) : undefined;
        const earlier = retry ? await kept(deps.responses, key, handed) : undefined;
        if (earlier) {
          // Subscribers saw the earlier attempt's deltas, maybe not all: this attempt streams the reply whole.
          live?.start(earlier.model);
          live?.replay(earlier.message);
          ctx.log.info('model response recovered from an earlier attempt', { turn: input.turn, attempt: ctx.info.attempt, requestId: earlier.requestId });
          if (!input.keepAlive) deps.conversations.remember(input.run, input.messageCount, earlier.message);
          return await charged(deps, input, earlier);
        }
        // A failure to read the conversation is not the provider's: it is not classified as one.
        // An earlier attempt left its request: no query, so a retry on a worker that does not
        // hold the workflow starts at once instead of waiting for the workflow to move.
        // A handed-over body comes without its context: that call's facts are left out.
        const built = handed ? undefined : await requestFor(deps, input);
        // Another provider's reasoning (unsigned thinking) never goes to Anthropic, which checks signatures (providers/reasoning.ts).
        const prepared = withContext(chat ? (handed ?? built!.body) : withoutUnsignedThinking(handed ?? built!.body), input.context);
        if (!handed) checkMedia(input.turn, prepared.body, input.context?.window);
        const rules = mediaRulesOf(chat);
        // Measured before any reservation: a request that does not fit is not sent (a handed-over one fitted).
        let requestTokens: number | undefined;
        if (input.context?.measureOnly) requestTokens = estimateRequestTokens(prepared.body, rules);
        else if (input.context && !input.keepAlive && !handed) {
          // Chat Completions has no count_tokens: the estimate decides alone.
          const counting = deps.countTokens !== false && !chat;
          requestTokens = await measureRequest(anthropic, prepared, input.context, counting, ctx.cancellationSignal, rules);
          checkFits(input.turn, requestTokens, input.context, counting);
        }
        // A fallback's model (src/shared/providers/failover.ts): the same request, asked of another model.
        const body = await withinBudget(deps, input, input.model ? { ...prepared.body, model: input.model } : prepared.body, rules);
        if (!handed && deps.responses && key) handing = deps.responses.putRequest(key, body).catch(() => undefined);
        progress.phase = 'calling model';
        live?.start(body.model);
        let served: ModelCallResult;
        // This attempt's proof of its gateway call: its cancel must carry it (the key alone is in history).
        const proof = randomBytes(32).toString('hex');
        try {
          // Every provider's client the worker made for its gateway carries the call key there (providers/registry.ts).
          const digest = deps.gateway && key && viaGateway ? callKeyDigest(key) : undefined;
          const options = {
            signal: deps.stopping ? AbortSignal.any([ctx.cancellationSignal, deps.stopping]) : ctx.cancellationSignal,
            ...(digest ? { headers: { [CALL_KEY_HEADER]: digest, [CALL_PROOF_HEADER]: proof } } : {}),
          };
          const toResult = (message: Anthropic.Messages.Message): ModelCallResult => ({
            message: { role: 'assistant' as const, content: message.content.map(toParamBlock) },
            stopReason: message.stop_reason,
            // Billed usage, the provider's compaction pass included; compaction and clearing apart.
            ...replyUsage(message, requestTokens),
            ...(requestTokens !== undefined ? { requestTokens } : {}),
            model: message.model,
            requestId: (message as { _request_id?: string | null })._request_id ?? undefined,
            ...(built ? { request: built.facts } : {}),
            ...(deps.clockScale && deps.clockScale !== 1 ? { ttlMs: ttlMsAt(lastBreakpointTtl(body), deps.clockScale) } : {}),
          });
          // The response is kept the moment the stream ends, in the SDK's own event, before
          // anything else queued on this worker runs: the window in which a dying worker costs
          // a second call is the parsing of the last event, nothing more.
          let result: ModelCallResult | undefined;
          let keeping: Promise<void> | undefined;
          let message: Anthropic.Messages.Message | undefined;
          // Delivery `batch` (a keep-alive never: it must land before the cache expires), on the
          // provider's batch interface: Message Batches, or an OpenAI-compatible Batch API.
          if (input.delivery === 'batch' && !input.keepAlive) {
            progress.phase = 'waiting for batch';
            const customId = key ? callKeyDigest(key) : `turn-${input.turn}`;
            const api = chat ? batchApiOf(chat, openaiBatches) : batchApiOf(anthropic, anthropicBatches);
            const out = await callViaBatch({ api, batcher, responses: deps.responses }, { key, customId, body, betas: prepared.betas }, options.signal, () => ctx.cancellationSignal.aborted, (id) => (progress.batch = id));
            if (out.kind === 'message') {
              message = out.message;
              const plain = toResult(message);
              const { batch: _none, ...part } = plain.usage;
              result = { ...plain, usage: { ...plain.usage, batch: part }, requestId: out.batchId };
              // No deltas came: subscribers get the reply whole.
              live?.replay(result.message);
              keeping = keep(deps.responses, key, result, body);
            } else if (input.batchFallback === 'fail') {
              throw ApplicationFailure.nonRetryable(`model call of turn ${input.turn} not answered by batch ${out.batchId} (${out.reason}); batchFallback 'fail' makes no interactive call`, BATCH_NOT_ANSWERED);
            } else {
              ctx.log.warn('batched model call not answered; calling interactively', { turn: input.turn, batchId: out.batchId, reason: out.reason });
              progress.phase = 'calling model';
            }
          }
          if (message) {
            // Answered by its batch.
          } else if (chat) {
            const out = await callChatCompletions(chat, body, {
              stream: deps.stream !== false,
              signal: options.signal,
              ...(options.headers ? { headers: options.headers } : {}),
              onEvent: (event) => {
                progress.events++;
                live?.onEvent(event);
              },
              onFinal: (final, requestId) => {
                result = { ...toResult(final), ...(requestId ? { requestId } : {}) };
                keeping = keep(deps.responses, key, result, body);
              },
            });
            message = out.message;
          } else if (deps.stream !== false) {
            // Beta headers (the 1M window, context management, the MCP connector) go by the beta client's `betas`.
            const stream: MessageStream = prepared.betas.length > 0
              ? (anthropic.beta.messages.stream({ ...(body as unknown as Parameters<Anthropic['beta']['messages']['stream']>[0]), betas: prepared.betas }, options) as unknown as MessageStream)
              : anthropic.messages.stream(body as Anthropic.Messages.MessageStreamParams, options);
            message = await stream
              .on('streamEvent', (event) => {
                progress.events++;
                live?.onEvent(event);
              })
              .on('finalMessage', (final) => {
                result = { ...toResult(final), ...(stream.request_id ? { requestId: stream.request_id } : {}) };
                keeping = keep(deps.responses, key, result, body);
              })
              .finalMessage();
          } else if (prepared.betas.length > 0) {
            message = (await anthropic.beta.messages.create({ ...(body as unknown as Anthropic.Beta.Messages.MessageCreateParamsNonStreaming), stream: false, betas: prepared.betas }, options)) as unknown as Anthropic.Messages.Message;
          } else {
            message = await anthropic.messages.create({ ...(body as Anthropic.Messages.MessageCreateParamsNonStreaming), stream: false }, options);
          }
          result ??= toResult(message);
          await (keeping ?? keep(deps.responses, key, result, body));
          // A keep-alive's reply is no message of the conversation.
          if (!input.keepAlive) deps.conversations.remember(input.run, input.messageCount, result.message);
          recordModelSuccess(body.model, result.usage, { provider: input.provider });
          served = result;
        } catch (err) {
          if (deps.stopping?.aborted && !ctx.cancellationSignal.aborted) {
            throw ApplicationFailure.retryable(`model call of turn ${input.turn} handed back: the worker is stopping`, 'WorkerStopping');
          }
          if (ctx.cancellationSignal.aborted && deps.gateway && key && viaGateway && cancelsUpstream(ctx.cancellationDetails)) await cancelAtGateway(deps.gateway, callKeyDigest(key), proof);
          const failure = ctx.cancellationSignal.aborted ? new CancelledFailure(`model call of turn ${input.turn} cancelled`) : capAttempts(classifyModelError(err), ctx.info.attempt, input.failoverAfter ? { afterAttempts: input.failoverAfter, ...(input.provider ? { provider: input.provider } : {}), model: body.model } : undefined);
          recordModelFailure(body.model, failure, { provider: input.provider });
          throw failure;
        }
        // Outside the provider's try: a ledger that cannot be reached is not a model error.
        return await charged(deps, input, served);
      } finally {
        stopHeartbeat();
        // Before the result: the deltas reach the workflow (and a reader, briefly awaited) ahead of its `turn-end`.
        await live?.close();
        await handing;
        await settling;
      }
    },
  };
}
