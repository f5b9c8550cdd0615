/**
 * Every error a command can end with, as one line and a documented exit code (exit.ts): the
 * CLI's own errors, forkflow's named errors, and what the Temporal SDK throws (a query the
 * workflow refused, a server error). Unknown errors print their message only; `--debug`
 * adds the stack.
 */
import { inspect } from 'node:util';
import { QueryNotRegisteredError, QueryRejectedError, ServiceError, WorkflowFailedError } from '@temporalio/client';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { AgentNotFoundError, DreamScheduleExistsError, DreamScheduleNotFoundError, InvalidInputError, isEncryptionKeyError, isStorageConfigError, PromptScheduleExistsError, PromptScheduleNotFoundError, TemporalUnavailableError } from '../client';
import { isUnreachable } from '../client/outage';
import { oneLine } from '../shared/base/text';
import { CliError, EXIT } from './exit';

const MAX_LINE = 1000;

function seconds(ms: number): string {
  return ms < 60_000 ? `${Math.round(ms / 100) / 10}s` : `${Math.round(ms / 6000) / 10}m`;
}

/** The gRPC detail under an SDK error (`14 UNAVAILABLE: ...`), if any. */
function grpcDetail(err: Error): string | undefined {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : undefined;
}

/** What the operator reads, and the exit code. */
export function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof TemporalUnavailableError) {
    return new CliError(
      `Cannot reach Temporal at ${err.address}: no answer for ${seconds(err.waitedMs)} (--outage-deadline ${seconds(err.deadlineMs)}${err.detail ? `; last error: ${err.detail}` : ''}). ` +
        'Start one with `forkflow dev`, or set TEMPORAL_ADDRESS / --address; wait longer with --outage-deadline.',
      EXIT.unavailable,
    );
  }
  // Malformed FORKFLOW_ENCRYPTION_KEYS / _KEY_FILE: configuration, like a bad flag.
  if (isEncryptionKeyError(err)) return new CliError(err.message, EXIT.usage);
  // A bad FORKFLOW_STORAGE / FORKFLOW_S3_* setting: the same.
  if (isStorageConfigError(err)) return new CliError(err.message, EXIT.usage);
  if (err instanceof AgentNotFoundError || err instanceof DreamScheduleNotFoundError || err instanceof PromptScheduleNotFoundError) return new CliError(err.message, EXIT.notFound);
  if (err instanceof WorkflowNotFoundError) return new CliError(`${err.workflowId || 'workflow'}: not found (check the id with \`forkflow list\`).`, EXIT.notFound);
  if (err instanceof InvalidInputError) return new CliError(err.message.replace(/:\n- /, ': ').replace(/\n- /g, '; '), EXIT.usage);
  if (err instanceof DreamScheduleExistsError || err instanceof PromptScheduleExistsError) return new CliError(err.message, EXIT.failure);
  // A query the workflow does not have, or one its handler refused (e.g. skipTranscript).
  if (err instanceof QueryNotRegisteredError) return new CliError(`query failed: ${err.message}`, EXIT.failure);
  if (err instanceof QueryRejectedError) return new CliError(`query rejected: ${err.message}`, EXIT.failure);
  if (err instanceof NamespaceNotFoundError) return new CliError(`${err.message}: check --namespace / TEMPORAL_NAMESPACE.`, EXIT.usage);
  if (err instanceof Error && isUnreachable(err)) return new CliError(`Cannot reach Temporal: ${grpcDetail(err) ?? err.message}. Start one with \`forkflow dev\`, or set TEMPORAL_ADDRESS / --address.`, EXIT.unavailable);
  if (err instanceof ServiceError) {
    const detail = grpcDetail(err);
    return new CliError(`${err.message}${detail ? `: ${detail}` : ''}`, EXIT.failure);
  }
  if (err instanceof WorkflowFailedError) return new CliError(`${err.message}: ${err.cause?.message ?? 'no cause given'}`, EXIT.failure);
  return new CliError(err instanceof Error ? err.message : String(err), EXIT.failure);
}

/** The line printed for `err` (always one line), and with `debug` the stacks of it and its causes. */
export function errorReport(err: unknown, debug: boolean): { text: string; exitCode: number } {
  const cli = toCliError(err);
  let text = `forkflow: ${oneLine(cli.message, MAX_LINE)}\n`;
  if (debug) {
    for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
      text += `${depth === 0 ? '' : 'caused by: '}${e instanceof Error ? (e.stack ?? e.message) : inspect(e)}\n`;
    }
  }
  return { text, exitCode: cli.exitCode };
}
