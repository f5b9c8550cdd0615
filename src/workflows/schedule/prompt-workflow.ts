/**
 * `scheduledPromptWorkflow`: what a prompt Schedule starts each time it fires. It signals
 * `sendMessage` to the agent's current run (a signal a workflow sends is recorded once, so a
 * firing delivers exactly one message, retries and replays included) and ends. An agent that
 * is closed or unknown gets nothing: the run fails with `AgentNotRunning`, which the
 * Schedule's recent actions and the Web UI show; the Schedule goes on firing. (Resuming a
 * finished agent is a client's act, `forkflow send`: a workflow cannot read another's result.)
 */
import { getExternalWorkflowHandle, isCancellation, log } from '@temporalio/workflow';
import { FAILURE, failure, invalid } from '../../shared/wire/failures';
import { describeIssues } from '../../shared/wire/fork-input-validation';
import { sendMessageSignal } from '../../shared/wire/messages';
import { SCHEDULE_SENDER_PREFIX, scheduledPromptInputSchema, type ScheduledPromptResult } from '../../shared/wire/scheduled-prompt';

export async function scheduledPromptWorkflow(raw: unknown): Promise<ScheduledPromptResult> {
  const parsed = scheduledPromptInputSchema.safeParse(raw);
  if (!parsed.success) throw invalid(FAILURE.invalidScheduledPrompt, 'Invalid scheduled prompt', describeIssues(parsed.error));
  const { agentId, schedule, message } = parsed.data;
  try {
    await getExternalWorkflowHandle(agentId).signal(sendMessageSignal, { ...message, from: message.from ?? `${SCHEDULE_SENDER_PREFIX}${schedule}` });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw failure(
      FAILURE.agentNotRunning,
      `Agent ${agentId} is not running (closed, or unknown: ${why}): the prompt of schedule ${schedule} was not delivered. Resume a finished agent with \`forkflow send ${agentId} ...\`, or delete the schedule.`,
    );
  }
  log.info('forkflow.scheduled_prompt_delivered', { agentId, schedule });
  return { agentId, delivered: true };
}
