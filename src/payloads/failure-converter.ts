/**
 * The failure converter of encrypting deployments: the SDK's default one with
 * `encodeCommonAttributes`, which moves each failure's message and stack trace into an
 * `encodedAttributes` payload (history then shows only "Encoded failure"), so the payload
 * codec encrypts them like any other payload. Every SDK's default failure converter reads
 * that payload back, so clients in other languages still get the message.
 *
 * Loaded by path (`DataConverter.failureConverterPath`): by the client and the worker, and
 * bundled into the workflow code, where failures that workflows raise are converted. Safe
 * for the workflow sandbox: it imports only @temporalio/common.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Present in any workflow bundle built with this converter: a worker given a pre-built
 * bundle looks for it, so an encrypting worker never runs workflows whose failures would
 * reach history in plaintext.
 */
export const ENCODED_FAILURES_MARK = 'forkflow:encoded-failure-attributes:v1';

// The mark rides on the converter so that bundling keeps it.
export const failureConverter = Object.assign(new DefaultFailureConverter({ encodeCommonAttributes: true }), { mark: ENCODED_FAILURES_MARK });
