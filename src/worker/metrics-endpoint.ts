/**
 * The worker's Prometheus scrape endpoint: parsing `host:port` (the `--metrics` flag and
 * FORKFLOW_METRICS_ADDRESS), the URL to scrape, and the default for `forkflow dev`/`demo`.
 */
import { preferredPort } from './dev-server';

/** The conventional port of a Prometheus exporter for OpenTelemetry-style metrics. */
export const DEFAULT_METRICS_PORT = 9464;

export interface MetricsAddress {
  host: string;
  port: number;
}

/** Thrown for a metrics address that is not `host:port`; the message says the expected form. */
export class InvalidMetricsAddressError extends Error {
  override name = 'InvalidMetricsAddressError';
  constructor(readonly value: string) {
    super(`Invalid metrics address "${value}": use ip:port (an IP address, not a host name), e.g. 0.0.0.0:${DEFAULT_METRICS_PORT}, 127.0.0.1:${DEFAULT_METRICS_PORT} or [::]:${DEFAULT_METRICS_PORT}.`);
  }
}

export function isInvalidMetricsAddress(err: unknown): err is InvalidMetricsAddressError {
  return err instanceof InvalidMetricsAddressError;
}

/**
 * Parses `host:port` (IPv6 hosts in brackets). The host must be an IP address: the
 * exporter binds a socket address and does not resolve names.
 *
 * @example parseMetricsAddress('0.0.0.0:9464') // { host: '0.0.0.0', port: 9464 }
 */
export function parseMetricsAddress(value: string): MetricsAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  const octetsOk = !m?.[2] || m[2].split('.').every((o) => Number(o) <= 255);
  if (!m || !octetsOk || !Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidMetricsAddressError(value);
  return { host: m[1] ?? m[2]!, port };
}

/** `host:port` in the form the exporter binds (brackets around IPv6). */
export function formatMetricsAddress(a: MetricsAddress): string {
  return a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** The URL to scrape; a wildcard bind address is scraped over loopback. */
export function metricsUrl(address: string): string {
  const a = parseMetricsAddress(address);
  const host = a.host === '0.0.0.0' ? '127.0.0.1' : a.host === '::' ? '::1' : a.host;
  return `http://${formatMetricsAddress({ host, port: a.port })}/metrics`;
}

/**
 * The address `forkflow dev`/`demo` serve metrics on: the one asked for (flag, then
 * FORKFLOW_METRICS_ADDRESS), else loopback on 9464, or a free port when 9464 is taken.
 */
export async function devMetricsAddress(requested?: string): Promise<string> {
  if (requested) return formatMetricsAddress(parseMetricsAddress(requested));
  const host = '127.0.0.1';
  return formatMetricsAddress({ host, port: await preferredPort(DEFAULT_METRICS_PORT, host) });
}
