/**
 * Reading workers' Prometheus endpoints for `forkflow top`: every URL is fetched side by
 * side with a timeout, and a worker that does not answer is reported, not fatal — the
 * screen keeps refreshing and shows what the other workers said.
 */
import { parsePrometheusText, type Sample } from './prometheus-text';

export interface ScrapeResult {
  samples: Sample[];
  /** One entry per URL that could not be read, with the reason. */
  errors: { url: string; error: string }[];
}

async function scrapeOne(url: string, timeoutMs: number): Promise<Sample[]> {
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return parsePrometheusText(await response.text());
}

/**
 * Scrapes each URL and concatenates the samples (sums over workers come later).
 *
 * @example const { samples, errors } = await scrapeMetrics(['http://127.0.0.1:9464/metrics']);
 */
export async function scrapeMetrics(urls: readonly string[], timeoutMs = 3000): Promise<ScrapeResult> {
  const settled = await Promise.allSettled(urls.map((u) => scrapeOne(u, timeoutMs)));
  const result: ScrapeResult = { samples: [], errors: [] };
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') result.samples.push(...s.value);
    else result.errors.push({ url: urls[i]!, error: s.reason instanceof Error ? (s.reason.cause instanceof Error ? s.reason.cause.message : s.reason.message) : String(s.reason) });
  });
  return result;
}
