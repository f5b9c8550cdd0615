/**
 * A reader for the Prometheus text exposition format (what a worker's `/metrics` serves),
 * enough for `forkflow top` and tests to sum series: samples with their labels and value.
 * Comments (`# HELP`, `# TYPE`) and timestamps are skipped; no metadata is kept.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A line that is not a sample; the message quotes it so a broken endpoint is easy to spot. */
export class PrometheusParseError extends Error {
  override name = 'PrometheusParseError';
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf' || raw === 'Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  const n = Number(raw);
  if (raw === '' || Number.isNaN(n)) throw new PrometheusParseError(`Not a sample value in "${line}"`);
  return n;
}

/** Reads `{a="x",b="y\"z"}` from `s` at `at` (the `{`); returns the labels and where it ended. */
function parseLabels(s: string, at: number, line: string): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (s[i] === ' ' || s[i] === ',') i++;
    if (s[i] === '}') return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(s.slice(i))?.[0];
    if (!name || s[i + name.length] !== '=' || s[i + name.length + 1] !== '"') throw new PrometheusParseError(`Bad label in "${line}"`);
    i += name.length + 2;
    let value = '';
    for (;;) {
      const c = s[i];
      if (c === undefined) throw new PrometheusParseError(`Unterminated label value in "${line}"`);
      i++;
      if (c === '"') break;
      if (c !== '\\') {
        value += c;
        continue;
      }
      const e = s[i++];
      value += e === 'n' ? '\n' : (e ?? '');
    }
    labels[name] = value;
  }
}

/**
 * Parses an exposition into samples, in order.
 *
 * @example parsePrometheusText('forkflow_forks_started_total{fork_label="x"} 2')
 *   // [{ name: 'forkflow_forks_started_total', labels: { fork_label: 'x' }, value: 2 }]
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line)?.[0];
    if (!name) throw new PrometheusParseError(`No metric name in "${line}"`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const parsed = parseLabels(rest, 0, line);
      labels = parsed.labels;
      rest = rest.slice(parsed.end);
    }
    const [value] = rest.trim().split(/\s+/); // a timestamp may follow
    samples.push({ name, labels, value: parseValue(value ?? '', line) });
  }
  return samples;
}

/**
 * Sums the samples named `name`, grouped by the values of `by` (missing labels count as
 * `''`). Summing across the SDK's tags (task queue, workflow type) and across workers.
 */
export function sumBy(samples: readonly Sample[], name: string, by: readonly string[] = []): { labels: Record<string, string>; value: number }[] {
  const groups = new Map<string, { labels: Record<string, string>; value: number }>();
  for (const s of samples) {
    if (s.name !== name) continue;
    const labels = Object.fromEntries(by.map((k) => [k, s.labels[k] ?? '']));
    const key = JSON.stringify(by.map((k) => labels[k]));
    const group = groups.get(key) ?? { labels, value: 0 };
    group.value += s.value;
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** The sum of all samples named `name` (0 when there are none). */
export function total(samples: readonly Sample[], name: string): number {
  return sumBy(samples, name)[0]?.value ?? 0;
}
