/**
 * The logger of an encrypting deployment (src/payloads/log-redaction.ts): ids, names, states
 * and numbers pass; errors, their messages and stacks, tool-call summaries and any other text
 * are replaced by a fingerprint; symbol keys (the SDK's timestamp) survive; and which
 * environments turn it on.
 */
import { ApplicationFailure, type LogLevel, type LogMetadata } from '@temporalio/common';
import { LogTimestamp } from '@temporalio/worker';
import { logsNeedRedaction, RedactingLogger, redactMeta } from '../../../src/payloads/log-redaction';

const MARK = 'PROMPTMARK-4f1e';

test('what names things passes; what came from a prompt, a tool or a model does not', () => {
  const failure = ApplicationFailure.create({ message: `400 invalid_request_error: prompt "${MARK}" is too long`, type: 'ModelInvalidRequest', nonRetryable: true });
  const at = Symbol.for('at');
  const meta = redactMeta({ workflowId: 'wf-1', runId: 'r', activityType: 'callModel', attempt: 3, durationMs: 12.5, isLocal: false, error: failure, call: `Bash: echo ${MARK}`, issues: [`${MARK}: unknown field`], note: MARK, [at]: 42 })!;
  expect(meta).toMatchObject({ workflowId: 'wf-1', runId: 'r', activityType: 'callModel', attempt: 3, durationMs: 12.5, isLocal: false });
  expect(meta.error).toEqual({ name: 'ApplicationFailure', type: 'ModelInvalidRequest', message: expect.stringMatching(/^\[redacted [0-9a-f]{12}\]$/) as string });
  expect(meta.call).toMatch(/^\[redacted [0-9a-f]{12}\]$/);
  expect(meta.issues).toBe('[redacted object]');
  expect(meta[at]).toBe(42);
  expect(JSON.stringify(meta)).not.toContain(MARK);
  // The same text fingerprints the same: a repeated error is still recognisable.
  expect(redactMeta({ note: MARK })!.note).toBe(meta.note);
});

test('the logger hands its inner logger the redacted metadata, and keeps the level, message and timestamp', () => {
  const lines: [LogLevel, string, LogMetadata | undefined][] = [];
  const inner = { log: (level: LogLevel, message: string, meta?: LogMetadata) => lines.push([level, message, meta]), trace: () => 0, debug: () => 0, info: () => 0, warn: () => 0, error: () => 0 };
  const logger = new RedactingLogger(inner);
  logger.warn('Activity failed', { error: new Error(`ENOENT: no such file '${MARK}'`), [LogTimestamp]: 7n, taskQueue: 'q' });
  logger.info('Worker state changed', { state: 'RUNNING' });
  expect(lines.map(([level, message]) => `${level} ${message}`)).toEqual(['WARN Activity failed', 'INFO Worker state changed']);
  expect(lines[0]![2]![LogTimestamp]).toBe(7n);
  expect(lines[0]![2]!.taskQueue).toBe('q');
  expect(JSON.stringify(lines[0]![2], (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(MARK);
  expect(lines[1]![2]).toEqual({ state: 'RUNNING' });
});

test('on when keys are set (or set wrongly), off otherwise', () => {
  expect(logsNeedRedaction({})).toBe(false);
  expect(logsNeedRedaction({ FORKFLOW_ENCRYPTION_KEYS: '' })).toBe(false);
  expect(logsNeedRedaction({ FORKFLOW_ENCRYPTION_KEYS: 'k1:AAAA' })).toBe(true);
  expect(logsNeedRedaction({ FORKFLOW_ENCRYPTION_KEY_FILE: '/run/secrets/keys.json' })).toBe(true);
});
