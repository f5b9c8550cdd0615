/**
 * Logs of an encrypting deployment: with keys set, nothing that came from a prompt, a tool or
 * a model may reach a log in plaintext, and error messages do (a provider's 400 quotes the
 * request, a tool's error its input, an approval request the command it would run). So every
 * log line of the process goes through this logger (src/worker/runtime.ts installs it, and
 * forwards the Rust core's lines to it too):
 *
 * - the message stays (forkflow's and the SDK's messages are fixed text);
 * - metadata that names things stays: ids, names, states, counts, numbers and booleans
 *   (`KEPT_KEYS`);
 * - anything else — an error, its message and stack, a tool call's summary, zod
 *   issues (which name unknown input fields) — is replaced: an error by its name and failure
 *   type, any value by `[redacted]` and a short fingerprint (the same text fingerprints the
 *   same, so a repeated error is still recognisable).
 *
 * The full text of a failure is still where it belongs: in history, encrypted (the failure
 * converter), readable through the codec server.
 */
import { createHash } from 'node:crypto';
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { envSetting } from '../shared/wire/env-settings';

/** Metadata keys whose values are identifiers or facts, never content. */
export const KEPT_KEYS: ReadonlySet<string> = new Set([
  'sdkComponent',
  'taskQueue',
  'namespace',
  'workflowId',
  'workflowType',
  'runId',
  'workflowRunId',
  'run_id',
  'workflow_id',
  'activityId',
  'activityType',
  'activity_id',
  'task_queue',
  'attempt',
  'isLocal',
  'agentId',
  'requestId',
  'turn',
  'state',
  'durationMs',
  'identity',
  'buildId',
  'tool',
  'signal',
  'what',
  'reason',
  'target',
  'size',
  'count',
  'port',
  'address',
]);

const fingerprint = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** A value of a key not on the list: what kind of thing it was, not what it said. */
function redacted(value: unknown): unknown {
  if (value instanceof Error) {
    const type = (value as { type?: unknown }).type;
    return { name: value.name, ...(typeof type === 'string' ? { type } : {}), message: `[redacted ${fingerprint(value.message)}]` };
  }
  if (typeof value === 'string') return `[redacted ${fingerprint(value)}]`;
  return `[redacted ${typeof value}]`;
}

/** `meta` with only what may be logged of an encrypting deployment (symbol keys, e.g. the SDK's timestamp, kept). */
export function redactMeta(meta: LogMetadata | undefined): LogMetadata | undefined {
  if (!meta) return meta;
  const out: LogMetadata = {};
  for (const [key, value] of Object.entries(meta) as [string, unknown][]) {
    const plain = value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
    out[key] = plain || (KEPT_KEYS.has(key) && typeof value === 'string') ? value : redacted(value);
  }
  for (const symbol of Object.getOwnPropertySymbols(meta)) out[symbol] = meta[symbol] as unknown;
  return out;
}

/** A logger that hands `inner` every line with its metadata redacted (see the header). */
export class RedactingLogger implements Logger {
  constructor(private readonly inner: Logger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): unknown {
    return this.inner.log(level, message, redactMeta(meta));
  }
  trace(message: string, meta?: LogMetadata): unknown {
    return this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): unknown {
    return this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): unknown {
    return this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): unknown {
    return this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): unknown {
    return this.log('ERROR', message, meta);
  }
}

/**
 * Whether this process's logs must be redacted: keys are configured (or configured wrongly:
 * someone meant to encrypt). Read from the same variables as the data converter.
 */
export function logsNeedRedaction(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(envSetting(env, 'FORKFLOW_ENCRYPTION_KEYS')?.trim() || envSetting(env, 'FORKFLOW_ENCRYPTION_KEY_FILE')?.trim());
}
