/**
 * A teammate's own part of its state (team-inbox.ts drives it): whether its lead asked it to
 * end, and whether its plan was approved. Apart from the inbox so that the agent can hold it
 * without importing the message handling.
 */
/** The team part of an agent's state (a teammate's): carried across continue-as-new. This class is its only writer. */
export class TeamState {
  private shutdown = false;
  private approved = false;

  /** Its lead asked it to end: it ends at its next idle point instead of waiting. */
  get shutdownRequested(): boolean {
    return this.shutdown;
  }

  /** Plan mode is over: its lead approved its plan. */
  get planApproved(): boolean {
    return this.approved;
  }

  requestShutdown(): void {
    this.shutdown = true;
  }

  approvePlan(): void {
    this.approved = true;
  }

  carry(): { shutdown?: true; planApproved?: true } | undefined {
    if (!this.shutdown && !this.approved) return undefined;
    return { ...(this.shutdown ? { shutdown: true as const } : {}), ...(this.approved ? { planApproved: true as const } : {}) };
  }

  adopt(state: { shutdown?: boolean; planApproved?: boolean } | undefined): void {
    this.shutdown = state?.shutdown === true;
    this.approved = state?.planApproved === true;
  }
}
