/** The floor sibling start latency is compared with (bench/siblings.ts): a workflow that does nothing. */
export async function emptyWorkflow(): Promise<void> {
  // Nothing: its first workflow task completes it.
}
