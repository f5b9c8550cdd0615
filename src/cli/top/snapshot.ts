/**
 * One reading of `forkflow top`: agents from visibility and, when workers' metrics URLs are
 * given, forkflow's metrics summed over them. Either half may fail on its own (a worker
 * restarting, visibility lagging) without hiding the other.
 */
import type { ForkflowClient } from '../../client';
import { countOpenAgents, type AgentCounts } from './agents';
import { summarizeMetrics, type MetricsSummary } from './metrics-summary';
import { scrapeMetrics } from './scrape';

export interface TopSnapshot {
  /** When the reading was taken (ISO 8601). */
  at: string;
  agents: AgentCounts | { error: string };
  /** Present when metrics URLs were given. */
  metrics?: { urls: string[]; errors: { url: string; error: string }[]; summary: MetricsSummary };
}

export interface TopOptions {
  query?: string;
  limit?: number;
  metricsUrls: string[];
}

export async function takeTopSnapshot(client: ForkflowClient, opts: TopOptions): Promise<TopSnapshot> {
  const [agents, scraped] = await Promise.all([
    countOpenAgents(client, { query: opts.query, limit: opts.limit }).catch((err: unknown) => ({ error: (err as Error).message })),
    opts.metricsUrls.length ? scrapeMetrics(opts.metricsUrls) : undefined,
  ]);
  const snapshot: TopSnapshot = { at: new Date().toISOString(), agents };
  if (scraped) snapshot.metrics = { urls: opts.metricsUrls, errors: scraped.errors, summary: summarizeMetrics(scraped.samples) };
  return snapshot;
}
