/**
 * OpenTelemetry for forkflow workers (OTel JS 1.x, as Temporal's interceptors use): spans go
 * to OTLP over HTTP when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set, or to the span processor
 * a caller passes in; with neither, the activity and workflow interceptors are not installed.
 */
import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, NoopSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter, OpenTelemetryActivityInboundInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

export interface Tracing {
  spanProcessor: SpanProcessor;
  resource?: Resource;
}

/** OTLP export when the standard OTel environment variables ask for it. */
export function tracingFromEnv(env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  return { spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()) };
}

let globalsInstalled = false;
/**
 * Activities read their parent span from Temporal headers through the global propagator
 * (W3C trace context, as the workflow side writes it) and need a context manager for the
 * parent to become active. Process-wide and idempotent, as OTel setup in a worker is.
 */
function installOtelGlobals(): void {
  if (globalsInstalled) return;
  globalsInstalled = true;
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
}

/** Modules with workflow interceptors: bundled with the workflows (see bundle.ts). */
export const WORKFLOW_INTERCEPTOR_MODULES = [require.resolve('../workflows/interceptors')];

/**
 * Worker options that install tracing; workflow spans reach the processor through a sink.
 * Without tracing (no processor given, no OTLP endpoint in the environment) the interceptors
 * are left out: they cost about 2 ms of every turn's workflow task (`npm run bench`) to make
 * spans nobody receives. A pre-built bundle carries its workflow interceptors either way, so
 * the sink is always there for them (spans dropped).
 */
export function workerTracingOptions(tracing: Tracing | undefined, prebuiltBundle: boolean): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const resource = tracing?.resource ?? new Resource({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'forkflow-worker' });
  if (!tracing) return { sinks: { exporter: makeWorkflowExporter(new NoopSpanProcessor(), resource) } };
  const { spanProcessor } = tracing;
  // Activity spans go to the same processor without touching the process-global provider.
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  installOtelGlobals();
  const tracer = provider.getTracer('forkflow-activities');
  return {
    interceptors: {
      // A pre-built bundle already contains the workflow interceptor modules.
      ...(prebuiltBundle ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }),
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }) })],
    },
    sinks: { exporter: makeWorkflowExporter(spanProcessor, resource) },
  };
}
