/**
 * The memo a fork run with skipTranscript starts with: listings (`list()`, `forkflow list`)
 * leave it out (seed 000: a skip_transcript fork "stays invisible to agent ps"); Temporal's own
 * UI still shows it. Set at start, so it costs no workflow command. Pure; workflow-safe.
 */
export const HIDDEN_MEMO = { forkflowHidden: true } as const;
