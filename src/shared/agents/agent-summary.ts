/**
 * A model-written summary of what a running agent is doing (seed 001's runForkedAgent caller
 * `agentSummary`): a zero-copy fork of the agent as it stands, asked one question and given
 * no tools, so it shares the agent's cached prefix, never touches the agent, and answers in
 * a sentence or two. The client runs it (src/client/agent-summary.ts); the request is marked
 * so the offline model can answer it too. Pure.
 */

/** The tag around the question: the directive's only varying text. */
export const AGENT_SUMMARY_TAG = 'agent-summary-request';
/** The summary fork's query source and label (visibility, metrics, traces). */
export const AGENT_SUMMARY_QUERY_SOURCE = 'agent_summary';
export const AGENT_SUMMARY_LABEL = 'agent-summary';

/** The directive of a summary fork (the same bytes for every agent, so sibling summaries share one prefix shape). */
export function agentSummaryDirective(): string {
  return [
    `<${AGENT_SUMMARY_TAG}>`,
    'Someone following this work asks what you are doing. This answer is for them and is not part of your task: do not call tools, and do not use the report format of the rules above.',
    'In one or two sentences, in the present tense, say what you are working on right now and what is left. Name the file, command or question at hand, if there is one.',
    `</${AGENT_SUMMARY_TAG}>`,
  ].join('\n');
}

/** Whether `text` (a user turn's text) carries the summary question. */
export function isAgentSummaryText(text: string): boolean {
  return text.includes(`<${AGENT_SUMMARY_TAG}>\n`);
}
