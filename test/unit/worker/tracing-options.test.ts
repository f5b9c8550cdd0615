/**
 * Tracing interceptors are installed only when spans go somewhere: they cost every turn's
 * workflow task time (`npm run bench`), and without a processor their spans are dropped.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { tracingFromEnv, WORKFLOW_INTERCEPTOR_MODULES, workerTracingOptions } from '../../../src/worker/tracing';

test('without tracing: no activity or workflow interceptors, but the sink a pre-built bundle calls is there', () => {
  const o = workerTracingOptions(undefined, false);
  expect(o.interceptors).toBeUndefined();
  expect(Object.keys(o.sinks ?? {})).toEqual(['exporter']);
});

test('with a span processor: activity interceptors, and the workflow modules unless the bundle is pre-built', () => {
  const tracing = { spanProcessor: new SimpleSpanProcessor(new InMemorySpanExporter()) };
  const bundling = workerTracingOptions(tracing, false);
  expect(bundling.interceptors?.workflowModules).toEqual(WORKFLOW_INTERCEPTOR_MODULES);
  expect(bundling.interceptors?.activity).toHaveLength(1);
  const prebuilt = workerTracingOptions(tracing, true);
  expect(prebuilt.interceptors?.workflowModules).toBeUndefined();
  expect(prebuilt.interceptors?.activity).toHaveLength(1);
});

test('the OTLP environment turns tracing on; nothing else does', () => {
  expect(tracingFromEnv({})).toBeUndefined();
  expect(tracingFromEnv({ OTEL_SERVICE_NAME: 'x' })).toBeUndefined();
  expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBeDefined();
});
