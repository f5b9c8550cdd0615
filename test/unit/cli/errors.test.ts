/** The CLI's error lines: every error one line with its documented exit code, --debug adds stacks. */
import { QueryNotRegisteredError, ServiceError } from '@temporalio/client';
import { AgentNotFoundError, EncryptionKeyError, InvalidForkInputError, StorageConfigError, TemporalUnavailableError } from '../../../src/client';
import { outageDeadlineMs } from '../../../src/cli/commands/agents';
import { errorReport } from '../../../src/cli/errors';
import { CliError, EXIT } from '../../../src/cli/exit';

function grpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code, details: message.replace(/^\d+ \w+: /, ''), metadata: {} });
}

test.each([
  ['a query the workflow refused', new QueryNotRegisteredError('Agent a runs with skipTranscript: its transcript is not served.', 3), EXIT.failure, 'forkflow: query failed: Agent a runs with skipTranscript: its transcript is not served.'],
  ['an unknown agent', new AgentNotFoundError('a'), EXIT.notFound, 'forkflow: No agent "a" found'],
  ['invalid input (its issues on one line)', new InvalidForkInputError(['prompt: required', 'maxTurns: too big']), EXIT.usage, 'forkflow: Invalid fork input: prompt: required; maxTurns: too big'],
  ['an outage past the deadline', new TemporalUnavailableError('h:7233', 1200, 1000, '14 UNAVAILABLE: connect ECONNREFUSED'), EXIT.unavailable, 'forkflow: Cannot reach Temporal at h:7233: no answer for 1.2s (--outage-deadline 1s; last error: 14 UNAVAILABLE: connect ECONNREFUSED)'],
  ['UNAVAILABLE from a call that is not retried', new ServiceError('Failed to signal Workflow', { cause: grpcError(14, '14 UNAVAILABLE: No connection established') }), EXIT.unavailable, 'forkflow: Cannot reach Temporal: 14 UNAVAILABLE: No connection established'],
  ['another server error', new ServiceError('Failed to query Workflow', { cause: grpcError(4, '4 DEADLINE_EXCEEDED: query timed out before a worker could process it') }), EXIT.failure, 'forkflow: Failed to query Workflow: 4 DEADLINE_EXCEEDED: query timed out'],
  ['an unknown error (message only, on one line)', new TypeError('something\nbroke'), EXIT.failure, 'forkflow: something broke'],
  ['a malformed encryption key list (configuration: a usage error)', new EncryptionKeyError('FORKFLOW_ENCRYPTION_KEYS (id:base64key, comma-separated): entry 1 has no "id:" before its key.'), EXIT.usage, 'forkflow: FORKFLOW_ENCRYPTION_KEYS (id:base64key'],
  ['bad storage settings (configuration: a usage error, on one line)', new StorageConfigError('Invalid payload storage settings:\n  FORKFLOW_S3_BUCKET: is missing'), EXIT.usage, 'forkflow: Invalid payload storage settings: FORKFLOW_S3_BUCKET: is missing'],
  ["the CLI's own error", new CliError('--limit must be a positive integer', EXIT.usage), EXIT.usage, 'forkflow: --limit must be a positive integer'],
])('%s', (_what, err, exitCode, start) => {
  const report = errorReport(err, false);
  expect(report.exitCode).toBe(exitCode);
  expect(report.text.startsWith(start)).toBe(true);
  expect(report.text.split('\n').filter(Boolean)).toHaveLength(1);
});

test('--debug adds the stack of the error and of its causes', () => {
  const err = new ServiceError('Failed to query Workflow', { cause: grpcError(4, '4 DEADLINE_EXCEEDED: late') });
  const text = errorReport(err, true).text;
  expect(text.split('\n')[0]).toBe('forkflow: Failed to query Workflow: 4 DEADLINE_EXCEEDED: late');
  expect(text).toContain('caused by: Error: 4 DEADLINE_EXCEEDED: late');
  expect(text).toMatch(/^\s+at /m);
});

test('the outage deadline: the flag wins over FORKFLOW_OUTAGE_DEADLINE; unset is the client default', () => {
  expect(outageDeadlineMs({ outageDeadline: '30s' }, { FORKFLOW_OUTAGE_DEADLINE: '2m' })).toBe(30_000);
  expect(outageDeadlineMs({}, { FORKFLOW_OUTAGE_DEADLINE: '2m' })).toBe(120_000);
  expect(outageDeadlineMs({ outageDeadline: '0s' }, {})).toBe(0);
  expect(outageDeadlineMs({}, {})).toBeUndefined();
  expect(() => outageDeadlineMs({}, { FORKFLOW_OUTAGE_DEADLINE: '5' })).toThrow('FORKFLOW_OUTAGE_DEADLINE: expected a duration');
});
