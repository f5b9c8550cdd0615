/**
 * An agent's MCP servers as its workflow holds them (written only here, through these
 * methods; driven by mcp-servers.ts and mcp-call.ts): the record of each server taken at the
 * agent's start — the tools offered, and a stdio server's session — how often a session was
 * started again, and which servers said their tool list changed. JSON-safe: it crosses
 * continue-as-new as `CarriedState.mcp`.
 */
import { isHttpServer, type CarriedMcp, type McpServerRecord, type McpServers, type McpServerStatus } from '../../shared/tools/mcp';

export class McpState {
  private readonly records: McpServerRecord[] = [];
  private readonly restarts: Record<string, number> = {};
  private readonly changed = new Set<string>();
  /** Servers whose session was started again while no call ran: the next result tells the model. */
  private readonly untold = new Set<string>();

  get all(): readonly McpServerRecord[] {
    return this.records;
  }

  get size(): number {
    return this.records.length;
  }

  record(server: string): McpServerRecord | undefined {
    return this.records.find((r) => r.server === server);
  }

  /** The record taken at start (or carried from the previous run). */
  set(record: McpServerRecord): void {
    const i = this.records.findIndex((r) => r.server === record.server);
    if (i >= 0) this.records[i] = record;
    else this.records.push(record);
  }

  /**
   * A server's session started again: it keeps the tools recorded at the start (the model is
   * offered the same bytes), with the new session; a list that differs is reported.
   */
  restarted(server: string, fresh: Extract<McpServerRecord, { ok: true }>, opts: { tellModel: boolean }): void {
    const old = this.record(server);
    this.restarts[server] = (this.restarts[server] ?? 0) + 1;
    if (!old?.ok) return this.set(fresh);
    if (fresh.listHash !== old.listHash) this.changed.add(server);
    this.set({ ...old, ...(fresh.session ? { session: fresh.session } : {}) });
    if (opts.tellModel) this.untold.add(server);
  }

  /** Whether the model is still to hear that `server` was started again (and now has). */
  takeUntold(server: string): boolean {
    return this.untold.delete(server);
  }

  listChanged(server: string): void {
    this.changed.add(server);
  }

  carry(): CarriedMcp | undefined {
    if (this.records.length === 0) return undefined;
    return { records: [...this.records], restarts: { ...this.restarts }, listChanged: [...this.changed] };
  }

  adopt(carried: CarriedMcp | undefined): void {
    if (!carried) return;
    for (const r of carried.records) this.set(r);
    Object.assign(this.restarts, carried.restarts);
    for (const s of carried.listChanged) this.changed.add(s);
  }

  status(configs: McpServers | undefined): McpServerStatus[] {
    return this.records.map((r) => {
      const config = configs?.[r.server];
      const base = { name: r.server, transport: config && isHttpServer(config) ? ('http' as const) : ('stdio' as const), restarts: this.restarts[r.server] ?? 0 };
      if (!r.ok) return { ...base, state: 'unavailable' as const, tools: 0, error: r.error };
      return {
        ...base,
        state: 'ready' as const,
        tools: r.tools.length,
        ...(r.session ? { sessionQueue: r.session.queue } : {}),
        ...(this.changed.has(r.server) ? { listChanged: true } : {}),
        ...(r.skipped ? { skipped: r.skipped } : {}),
      };
    });
  }
}
