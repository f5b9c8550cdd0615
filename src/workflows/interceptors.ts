/**
 * Workflow interceptors bundled with forkflow's workflows: OpenTelemetry spans for workflow
 * runs, activities, child workflows and signals, exported through the worker's sink (spans
 * are not exported again on replay).
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { WorkflowInterceptors } from '@temporalio/workflow';

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new OpenTelemetryInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
