/**
 * `compactContext`: forkflow compaction's model call, a durable step of its own. It asks the
 * agent's model for a summary of the older part of the conversation (messages `[from,
 * keepFrom)`, as the agent's requests send them, with forkflow's compaction request appended),
 * so the call reads the agent's cached prefix. Its reply is kept in the response store the
 * moment it arrives (a worker that dies before the workflow records it costs no second
 * summary), and it is charged at the tree's root like any call, once per compaction number.
 */
import { callChatCompletions } from './providers/openai-call';
import { providerFor, throughGateway } from './providers/registry';
import { withoutUnsignedThinking } from './providers/reasoning';
import { randomBytes } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { textOf, type MessageParam } from '../../shared/messages-api/anthropic';
import type { CompactionCallInput, CompactionCallResult, ModelCallResult } from '../../shared/wire/activity-io';
import { compactionRequestBlock } from '../../shared/context/summary';
import { viewMessages } from '../../shared/context/view';
import { buildMessagesRequest } from '../../shared/messages-api/request';
import { CALL_KEY_HEADER, CALL_PROOF_HEADER } from '../../shared/providers/model-gateway';
import { startHeartbeat } from '../heartbeat';
import { recordModelFailure, recordModelSuccess } from '../metrics';
import { callKeyDigest, cancelAtGateway, keep, kept, toParamBlock, type ModelDeps } from './call-model';
import { checkFits, measureRequest, replyUsage, withContext } from './context';
import { capAttempts, classifyModelError } from './errors';
import type { CallKey } from './response-store';
import type { MessagesRequest } from '../../shared/messages-api/anthropic';
import { estimateRequestTokens } from '../../shared/messages-api/request-tokens';
import { BUDGET_EXHAUSTED_FAILURE } from '../../shared/tree/tree-ledger';
import { SHARE_SHORT_FAILURE } from '../../shared/tree/tree-shares';

export type CompactionDeps = Pick<ModelDeps, 'anthropic' | 'providers' | 'conversations' | 'responses' | 'stopping' | 'gateway' | 'ledger' | 'countTokens'>;

/** The summarising request: the agent's own context and messages up to `keepFrom`, and the compaction request. */
async function summaryRequest(deps: CompactionDeps, input: CompactionCallInput) {
  const { call } = input;
  const [held, all] = await Promise.all([deps.conversations.context(call.contextFrom ?? call.run, call.contextKey), deps.conversations.forModelCall(call)]);
  const older = viewMessages(all.slice(0, input.keepFrom), call.context);
  const asked: MessageParam[] = [...older, { role: 'user', content: [compactionRequestBlock(input.instructions)] }];
  // Same system, tools, thinking and cache markers as the agent's requests: its cached prefix is
  // read, not paid again. Extended thinking needs room beyond its budget for the summary itself.
  const budget = held.thinking?.type === 'enabled' ? held.thinking.budget_tokens : 0;
  const body = buildMessagesRequest({ ...held, maxTokens: input.maxTokens + budget }, asked, call.cacheTtl ? { ttl: call.cacheTtl } : {});
  // A summarising call carries no context edits of its own; it keeps the window's beta headers.
  return withContext(body, call.context ? { window: call.context.window, ...(call.context.betas ? { betas: call.context.betas } : {}) } : undefined);
}

/**
 * In a tree that lends budget shares (src/shared/tree/tree-shares.ts) the summary's bound (its input
 * counted in full, plus its `max_tokens`) must fit the share the agent holds: otherwise no call
 * is made and the agent asks its root for more (`TreeShareShort`). A summary is never cut short.
 */
function fitsShare(input: CompactionCallInput, body: MessagesRequest): void {
  const budget = input.call.budget;
  if (!budget?.share) return;
  const bound = estimateRequestTokens(body) + body.max_tokens;
  if (bound > budget.left) throw ApplicationFailure.create({ message: `compaction ${input.compaction} not made: the agent has ${budget.left} tokens of its budget left, and the summary's call could charge ${bound}`, type: BUDGET_EXHAUSTED_FAILURE, nonRetryable: true });
  if (bound > budget.share.tokens) {
    throw ApplicationFailure.create({ message: `compaction ${input.compaction} not made yet: the agent holds ${budget.share.tokens} tokens of its tree's budget, and the summary's call could charge ${bound}`, type: SHARE_SHORT_FAILURE, nonRetryable: true, details: [{ need: bound, want: bound }] });
  }
}

export function createCompactionActivities(deps: CompactionDeps) {
  return {
    async compactContext(input: CompactionCallInput): Promise<CompactionCallResult> {
      const ctx = Context.current();
      const { workflowExecution, namespace, activityId } = ctx.info;
      const turn = input.call.turn;
      const key: CallKey | undefined = workflowExecution ? { namespace, workflowId: workflowExecution.workflowId, runId: workflowExecution.runId, activityId, turn } : undefined;
      const stopHeartbeat = startHeartbeat(() => ({ turn, compaction: input.compaction }));
      const charge = async (r: ModelCallResult): Promise<CompactionCallResult> => {
        const ledger = input.call.budget?.ledger;
        if (ledger && deps.ledger) {
          await deps.ledger.charge(ledger.rootId, { agentId: input.call.agentId, turn, model: r.model, usage: r.usage, toolUses: ledger.toolUses, compaction: input.compaction, ...(ledger.token ? { token: ledger.token } : {}) });
        }
        return { summary: textOf(r.message).trim(), usage: r.usage, model: r.model, requestTokens: r.requestTokens ?? 0, ...(r.requestId ? { requestId: r.requestId } : {}) };
      };
      try {
        // A summary an earlier attempt received is handed back: the same summary, billed once.
        // It is kept bound to its request, which the conversation rebuilds the same on every attempt.
        const sent = await summaryRequest(deps, input);
        const earlier = ctx.info.attempt > 1 ? await kept(deps.responses, key, sent.body) : undefined;
        if (earlier) return await charge(earlier);
        fitsShare(input, sent.body);
        // The agent's provider summarises its conversation (an OpenAI-compatible one through its adapter, without count_tokens).
        const provider = providerFor(deps.providers, input.call.provider);
        const anthropic = provider?.kind === 'anthropic' ? provider.anthropic : deps.anthropic;
        const chat = provider?.kind === 'openai-compatible' ? provider.openai : undefined;
        const viaGateway = throughGateway(deps.gateway, provider, deps.anthropic);
        const window = input.call.context?.window;
        const requestTokens = window ? await measureRequest(anthropic, chat ? sent : { ...sent, body: withoutUnsignedThinking(sent.body) }, { window }, deps.countTokens !== false && !chat, ctx.cancellationSignal) : undefined;
        if (window && requestTokens !== undefined) checkFits(turn, requestTokens, { window }, true);
        let result: ModelCallResult;
        // This attempt's proof of its gateway call: only it may cancel the call there.
        const proof = randomBytes(32).toString('hex');
        try {
          const digest = deps.gateway && key && viaGateway ? callKeyDigest(key) : undefined;
          const options = { signal: deps.stopping ? AbortSignal.any([ctx.cancellationSignal, deps.stopping]) : ctx.cancellationSignal, ...(digest ? { headers: { [CALL_KEY_HEADER]: digest, [CALL_PROOF_HEADER]: proof } } : {}) };
          // Another provider's reasoning (unsigned thinking) never goes to Anthropic (providers/reasoning.ts).
          const params = chat ? sent.body : withoutUnsignedThinking(sent.body);
          const stream = chat
            ? undefined
            : sent.betas.length > 0
              ? anthropic.beta.messages.stream({ ...(params as unknown as Parameters<Anthropic['beta']['messages']['stream']>[0]), betas: sent.betas }, options)
              : anthropic.messages.stream(params as Anthropic.Messages.MessageStreamParams, options);
          const answered = chat ? await callChatCompletions(chat, params, { stream: true, signal: options.signal, ...(options.headers ? { headers: options.headers } : {}) }) : undefined;
          const message = answered ? answered.message : ((await stream!.finalMessage()) as Anthropic.Messages.Message);
          const requestId = answered ? answered.requestId : stream?.request_id;
          result = {
            message: { role: 'assistant', content: message.content.map(toParamBlock) },
            stopReason: message.stop_reason,
            ...replyUsage(message, requestTokens),
            model: message.model,
            ...(requestTokens !== undefined ? { requestTokens } : {}),
            ...(requestId ? { requestId } : {}),
          };
          await keep(deps.responses, key, result, sent.body);
          recordModelSuccess(sent.body.model, result.usage, { provider: input.call.provider });
        } catch (err) {
          if (deps.stopping?.aborted && !ctx.cancellationSignal.aborted) throw ApplicationFailure.retryable(`compaction before turn ${turn} handed back: the worker is stopping`, 'WorkerStopping');
          if (ctx.cancellationSignal.aborted && deps.gateway && key && viaGateway) await cancelAtGateway(deps.gateway, callKeyDigest(key), proof);
          const failure = ctx.cancellationSignal.aborted ? new CancelledFailure(`compaction before turn ${turn} cancelled`) : capAttempts(classifyModelError(err), ctx.info.attempt);
          recordModelFailure(sent.body.model, failure, { provider: input.call.provider });
          throw failure;
        }
        if (textOf(result.message).trim() === '') throw ApplicationFailure.nonRetryable(`compaction before turn ${turn}: the model wrote no summary (stop reason ${result.stopReason})`, 'CompactionFailed');
        return await charge(result);
      } finally {
        stopHeartbeat();
      }
    },
  };
}
