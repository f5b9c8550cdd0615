/**
 * The one place that installs Temporal's process-wide `Runtime`: its logger and, when asked,
 * the Prometheus endpoint that serves Temporal's runtime metrics and forkflow's own
 * (`forkflow_…`, see src/shared/wire/metrics.ts) on `http://<address>/metrics`.
 *
 * The SDK allows one install per process, before any worker or native connection exists,
 * and the endpoint lives as long as the runtime: so `forkflow worker`, `forkflow dev`/`demo`
 * and the test kit all come through here, and a second call is a no-op.
 */
import { IllegalStateError, type LogLevel } from '@temporalio/common';
import { DefaultLogger, Runtime, type RuntimeOptions } from '@temporalio/worker';
import { logsNeedRedaction, RedactingLogger } from '../payloads/log-redaction';
import { histogramBuckets } from '../shared/wire/metrics';
import { formatMetricsAddress, metricsUrl, parseMetricsAddress } from './metrics-endpoint';

export interface RuntimeSettings {
  /** Level of the SDK's logger (worker and workflow logs). Default WARN. */
  logLevel?: LogLevel;
  /** `ip:port` to serve Prometheus metrics on; no endpoint when unset. */
  metricsAddress?: string;
  /**
   * Redact what log lines carry besides ids and facts (src/payloads/log-redaction.ts), the Rust
   * core's lines included. Default: when encryption keys are set in the environment.
   */
  redactLogs?: boolean;
}

export interface InstalledRuntime {
  /** The bound `ip:port`, when metrics are on. */
  metricsAddress?: string;
  /** The URL to scrape, when metrics are on. */
  metricsUrl?: string;
}

/** The runtime could not be installed as asked; the message says what to change. */
export class RuntimeInstallError extends Error {
  override name = 'RuntimeInstallError';
}

export function isRuntimeInstallError(err: unknown): err is RuntimeInstallError {
  return err instanceof RuntimeInstallError;
}

// Module state on purpose: it mirrors the SDK's own per-process singleton (and, under jest,
// both live in the same per-test-file module registry).
let installed: InstalledRuntime | undefined;

function runtimeOptions(logLevel: LogLevel, metricsAddress: string | undefined, redact: boolean): RuntimeOptions {
  const logger = redact ? new RedactingLogger(new DefaultLogger(logLevel)) : new DefaultLogger(logLevel);
  // Redacting: the core's lines come through the logger too, instead of straight to the console.
  const logging = redact ? { logging: { forward: {}, filter: { core: 'WARN' as const, other: 'ERROR' as const } } } : {};
  const metrics = metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress, histogramBucketOverrides: histogramBuckets() } } } : {};
  if (!redact && !metricsAddress) return { logger };
  return { logger, telemetryOptions: { ...logging, ...metrics } };
}

/**
 * Installs the Temporal runtime once for this process. Call it before creating any worker or
 * `NativeConnection` (they instantiate a default runtime otherwise). Later calls return what
 * the first one installed; asking a later call for a different metrics address throws,
 * because the endpoint cannot move without restarting the process.
 *
 * @example
 * const { metricsUrl } = installRuntime({ logLevel: 'INFO', metricsAddress: '0.0.0.0:9464' });
 * // scrape metricsUrl (http://127.0.0.1:9464/metrics)
 */
export function installRuntime(settings: RuntimeSettings = {}): InstalledRuntime {
  const wanted = settings.metricsAddress ? formatMetricsAddress(parseMetricsAddress(settings.metricsAddress)) : undefined;
  if (installed) {
    if (wanted && wanted !== installed.metricsAddress) {
      throw new RuntimeInstallError(
        `The Temporal runtime is already installed ${installed.metricsAddress ? `with metrics on ${installed.metricsAddress}` : 'without metrics'}; it cannot serve metrics on ${wanted} as well. Install it once, with the address, before starting workers.`,
      );
    }
    return installed;
  }
  try {
    Runtime.install(runtimeOptions(settings.logLevel ?? 'WARN', wanted, settings.redactLogs ?? logsNeedRedaction()));
  } catch (err) {
    if (!wanted) {
      // A runtime exists already (created implicitly by a connection made earlier): its
      // defaults are fine when no metrics are wanted.
      if (err instanceof IllegalStateError) return (installed = {});
      throw err;
    }
    const why =
      err instanceof IllegalStateError
        ? 'the Temporal runtime was created before installRuntime() was called (a worker or NativeConnection came first)'
        : `${(err as Error).message}. Choose another address with --metrics or FORKFLOW_METRICS_ADDRESS`;
    throw new RuntimeInstallError(`Cannot serve metrics on ${wanted}: ${why}.`);
  }
  installed = wanted ? { metricsAddress: wanted, metricsUrl: metricsUrl(wanted) } : {};
  return installed;
}
