/**
 * Workflow time. Inside the sandbox `Date.now()` is the SDK's deterministic clock (the time
 * of the current workflow task), so it is safe here and only here.
 */
export function workflowNow(): number {
  // eslint-disable-next-line no-restricted-properties -- the SDK makes this deterministic in workflows
  return Date.now();
}

export function isoNow(): string {
  return new Date(workflowNow()).toISOString();
}
