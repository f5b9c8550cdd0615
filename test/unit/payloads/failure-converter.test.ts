/**
 * Encrypted failure messages: with keys, the converter moves a failure's message and stack
 * into an encoded (then encrypted) payload and reads them back; without keys nothing changes;
 * an encrypting worker refuses a pre-built workflow bundle made without that converter.
 */
import { randomBytes } from 'node:crypto';
import { ApplicationFailure, defaultPayloadConverter, type DataConverter } from '@temporalio/common';
import { decodeFailure, encodeFailure, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { encodesFailures, forkflowDataConverter } from '../../../src/payloads/data-converter';
import { ENCODED_FAILURES_MARK } from '../../../src/payloads/failure-converter';
import { checkBundleFor, WorkflowBundleMismatchError } from '../../../src/worker/bundle';

const keys = { FORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`, FORKFLOW_STORAGE: 'off' };
const secret = 'the password is hunter2';

test('with keys: the failure on the wire says "Encoded failure"; its message is only in the encrypted attributes', async () => {
  const dc = forkflowDataConverter({ env: keys });
  expect(encodesFailures(dc)).toBe(true);
  const loaded = loadDataConverter(dc);
  const failure = loaded.failureConverter.errorToFailure(ApplicationFailure.nonRetryable(secret, 'Boom'), loaded.payloadConverter);
  const wire = await encodeFailure(loaded.payloadCodecs, failure);
  expect(wire.message).toBe('Encoded failure');
  expect(wire.stackTrace).toBe('');
  expect(Buffer.from(wire.encodedAttributes!.data!).toString('latin1')).not.toContain('hunter2');
  expect(Buffer.from(wire.encodedAttributes!.metadata!.encoding!).toString()).toBe('binary/encrypted');
  // A client with the keys reads the message back.
  const err = loaded.failureConverter.failureToError(await decodeFailure(loaded.payloadCodecs, wire), loaded.payloadConverter);
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err.message).toBe(secret);
  expect((err as ApplicationFailure).type).toBe('Boom');
});

test('without keys the SDK default stays: messages in plain text, any bundle accepted', async () => {
  const dc = forkflowDataConverter({ env: { FORKFLOW_STORAGE: 'off' } });
  expect(encodesFailures(dc)).toBe(false);
  const loaded = loadDataConverter(dc);
  const failure = loaded.failureConverter.errorToFailure(ApplicationFailure.nonRetryable(secret), defaultPayloadConverter);
  expect(failure.message).toBe(secret);
  await expect(checkBundleFor({ code: 'bundle without the mark' }, dc)).resolves.toBeUndefined();
});

test('an encrypting worker refuses a bundle without the converter and takes one with it', async () => {
  const dc: DataConverter = forkflowDataConverter({ env: keys });
  await expect(checkBundleFor({ code: 'bundle without the mark' }, dc)).rejects.toThrow(WorkflowBundleMismatchError);
  await expect(checkBundleFor({ code: `… "${ENCODED_FAILURES_MARK}" …` }, dc)).resolves.toBeUndefined();
});
