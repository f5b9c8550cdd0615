/**
 * Service tools in TypeScript: define tools from zod schemas, serve them from a Temporal
 * worker of your own, and hand forkflow the routes and the tool definitions. The same
 * definitions give the JSON Schema the model is offered (for a parent snapshot's `tools`, or
 * a route's `definitions`) and the parser the worker checks each call's input with.
 *
 * The worker answers the contract in src/shared/tools/service-contract.ts (activity
 * `forkflow.callTool`, and `forkflow.hook` for hooks); a service in another language
 * implements the same two activities with its own SDK (README "Your own tools").
 *
 * @example
 * const lookupOrder = defineTool({
 *   name: 'lookup_order', description: 'Look an order up by its id.',
 *   input: z.object({ order_id: z.string() }), readOnly: true,
 *   run: async ({ order_id }) => JSON.stringify(await db.orders.get(order_id)),
 * });
 * const worker = await createToolWorker({ connection, namespace: 'default', taskQueue: 'orders-tools', tools: [lookupOrder] });
 * await worker.run();
 * // and where forks start: forkflow.start({ prompt, routes: toolRoutes([lookupOrder], 'orders-tools') })
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DataConverter } from '@temporalio/common';
import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import { z } from 'zod';
import type { ToolDefinition } from '../shared/messages-api/anthropic';
import { durationSchema, type Duration } from '../shared/base/duration';
import { utf8Length } from '../shared/base/hash';
import { plainIssues } from '../shared/base/plain-issues';
import { ROUTE_DEFAULTS, type RouteInput } from '../shared/tools/routes';
import {
  SERVICE_HOOK_ACTIVITY,
  SERVICE_TOOL_ACTIVITY,
  serviceHookCallSchema,
  serviceToolCallSchema,
  type HookEvent,
  type ServiceHookAnswer,
  type ServiceHookCall,
  type ServiceToolResult,
} from '../shared/tools/service-contract';
import { forkflowDataConverter } from '../payloads/data-converter';
import { quietActivityOnlyWorker } from '../activities/mcp/host';

export { SERVICE_HOOK_ACTIVITY, SERVICE_TOOL_ACTIVITY, serviceContractJsonSchemas, type ServiceHookAnswer, type ServiceHookCall, type ServiceToolCall, type ServiceToolResult } from '../shared/tools/service-contract';

/** What a tool's `run` is told about the call besides its input. */
export interface ToolCallContext {
  toolUseId: string;
  agentId: string;
  rootId: string;
  turn: number;
  /** 1, or more when forkflow runs an idempotent tool again after a lost attempt. */
  attempt: number;
  /** Aborted when the call is cancelled (the agent was, or the worker shuts down). */
  signal: AbortSignal;
  /** Tells Temporal the call is alive (the helper beats on its own when the tool declares `heartbeat`). */
  heartbeat(details?: unknown): void;
}

/** What `run` may return: text, content blocks, or a whole result (`is_error` for a failure the model should read). */
export type ToolOutput = string | ServiceToolResult['content'] | ServiceToolResult;

export interface ServiceTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  readOnly: boolean;
  idempotent: boolean;
  timeout?: Duration;
  heartbeat?: Duration;
  maxResultBytes: number;
  run(input: z.output<S>, call: ToolCallContext): Promise<ToolOutput> | ToolOutput;
}

/**
 * A tool from a zod schema. `readOnly` (default false) and `idempotent` (default: readOnly)
 * say what it is; `timeout` and `heartbeat` are its route's (see toolRoutes).
 */
export function defineTool<S extends z.ZodType>(def: {
  name: string;
  description: string;
  input: S;
  readOnly?: boolean;
  idempotent?: boolean;
  timeout?: Duration;
  heartbeat?: Duration;
  maxResultBytes?: number;
  run: (input: z.output<S>, call: ToolCallContext) => Promise<ToolOutput> | ToolOutput;
}): ServiceTool<S> {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(def.name)) throw new Error(`tool name "${def.name}" must be 1-128 letters, digits, _ or -`);
  for (const d of [def.timeout, def.heartbeat]) if (d !== undefined) durationSchema.parse(d);
  const readOnly = def.readOnly ?? false;
  return { ...def, readOnly, idempotent: def.idempotent ?? readOnly, maxResultBytes: def.maxResultBytes ?? ROUTE_DEFAULTS.maxResultBytes };
}

/** The Anthropic tool definitions of `tools` (for a parent snapshot, or a route's `definitions`). */
export function toolDefinitions(tools: readonly ServiceTool[]): ToolDefinition[] {
  return tools.map((t) => {
    const schema = z.toJSONSchema(t.input, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
    delete schema.$schema;
    return { name: t.name, description: t.description, input_schema: { type: 'object', ...schema } };
  });
}

/**
 * Routes for `tools` on `taskQueue`, one per tool (each keeps its own semantics), with their
 * definitions (offered to an agent that has no parent snapshot).
 */
export function toolRoutes(tools: readonly ServiceTool[], taskQueue: string, opts: { scheduleToStart?: Duration; retry?: RouteInput['retry'] } = {}): RouteInput[] {
  const definitions = toolDefinitions(tools);
  return tools.map((t, i) => ({
    tools: [t.name],
    taskQueue,
    readOnly: t.readOnly,
    idempotent: t.idempotent,
    ...(t.timeout !== undefined ? { timeout: t.timeout } : {}),
    ...(t.heartbeat !== undefined ? { heartbeat: t.heartbeat } : {}),
    ...(opts.scheduleToStart !== undefined ? { scheduleToStart: opts.scheduleToStart } : {}),
    ...(opts.retry ? { retry: opts.retry } : {}),
    maxResultBytes: t.maxResultBytes,
    definitions: [definitions[i]!],
  }));
}

function normalized(output: ToolOutput): ServiceToolResult {
  if (typeof output === 'string' || Array.isArray(output)) return { content: output };
  return output;
}

function bytesOf(content: ServiceToolResult['content']): number {
  if (typeof content === 'string') return utf8Length(content);
  return content.reduce((n, b) => n + (b.type === 'text' ? utf8Length(b.text) : b.source.data.length), 0);
}

/** A hook: what it answers for its event. */
export interface ServiceHook {
  event: HookEvent;
  run(call: ServiceHookCall): Promise<ServiceHookAnswer> | ServiceHookAnswer;
}

export function defineHook(def: ServiceHook): ServiceHook {
  return def;
}

/**
 * The contract's activities for `tools` (and `hooks`), to register on a worker of your own
 * (createToolWorker does): `forkflow.callTool` checks the call, finds the tool, checks its
 * input against the schema and runs it. A bad input, an unknown tool or an oversized result
 * is an `is_error` result the model reads; a tool that throws fails the activity with its
 * message, which forkflow hands the model as an error result.
 */
export function serviceActivities(tools: readonly ServiceTool[], hooks: readonly ServiceHook[] = []): Record<string, (input: unknown) => Promise<unknown>> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  if (byName.size !== tools.length) throw new Error('two tools have the same name');
  const activities: Record<string, (input: unknown) => Promise<unknown>> = {
    async [SERVICE_TOOL_ACTIVITY](raw: unknown): Promise<ServiceToolResult> {
      const parsed = serviceToolCallSchema.safeParse(raw);
      if (!parsed.success) throw ApplicationFailure.create({ type: 'NotAToolCall', nonRetryable: true, message: `not a forkflow tool call: ${plainIssues(parsed.error, 'call').join('; ')}` });
      const call = parsed.data;
      const tool = byName.get(call.tool);
      if (!tool) return { is_error: true, content: `This service has no tool named "${call.tool}" (it serves ${[...byName.keys()].join(', ') || 'none'}).` };
      const input = tool.input.safeParse(call.input);
      if (!input.success) return { is_error: true, content: `Invalid input for ${tool.name}: ${plainIssues(input.error, 'input').join('; ')}. Fix the input and call it again.` };
      const ctx = Context.current();
      const beatMs = ctx.info.heartbeatTimeoutMs;
      const beat = beatMs ? setInterval(() => ctx.heartbeat(), Math.max(50, Math.min(1_000, beatMs / 2))) : undefined;
      try {
        const result = normalized(await tool.run(input.data, { toolUseId: call.tool_use_id, agentId: call.agent_id, rootId: call.root_id, turn: call.turn, attempt: call.attempt, signal: ctx.cancellationSignal, heartbeat: (d) => ctx.heartbeat(d) }));
        const bytes = bytesOf(result.content);
        if (bytes > tool.maxResultBytes) return { is_error: true, content: `${tool.name} produced ${bytes} bytes, more than the ${tool.maxResultBytes} it may return: ask for less.` };
        return result;
      } catch (err) {
        if (err instanceof ApplicationFailure) throw err;
        throw ApplicationFailure.create({ type: 'ToolFailed', message: err instanceof Error ? err.message : String(err), cause: err instanceof Error ? err : undefined });
      } finally {
        clearInterval(beat);
      }
    },
  };
  if (hooks.length > 0) {
    activities[SERVICE_HOOK_ACTIVITY] = async (raw: unknown): Promise<ServiceHookAnswer> => {
      const parsed = serviceHookCallSchema.safeParse(raw);
      if (!parsed.success) throw ApplicationFailure.create({ type: 'NotAHookCall', nonRetryable: true, message: `not a forkflow hook call: ${plainIssues(parsed.error, 'call').join('; ')}` });
      const answer: ServiceHookAnswer = {};
      for (const hook of hooks.filter((h) => h.event === parsed.data.event)) {
        const a = await hook.run(parsed.data);
        if (a.decision === 'deny' || a.decision === 'block') return a;
        Object.assign(answer, a);
      }
      return answer;
    };
  }
  return activities;
}

export interface ToolWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue: string;
  tools: readonly ServiceTool[];
  hooks?: readonly ServiceHook[];
  /** Default: `forkflowDataConverter()` (the environment's payload encryption and external storage), as forkflow's workers use. */
  dataConverter?: DataConverter;
  /** Anything else Temporal's Worker takes (concurrency, identity…). */
  worker?: Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'activities' | 'dataConverter' | 'workflowsPath' | 'workflowBundle'>;
}

/** A Temporal worker serving `tools` (and `hooks`) on `taskQueue`. Run it with `worker.run()`. */
export async function createToolWorker(o: ToolWorkerOptions): Promise<Worker> {
  const worker = await Worker.create({
    connection: o.connection,
    namespace: o.namespace ?? 'default',
    taskQueue: o.taskQueue,
    activities: serviceActivities(o.tools, o.hooks),
    dataConverter: o.dataConverter ?? forkflowDataConverter(),
    ...o.worker,
  });
  return quietActivityOnlyWorker(worker);
}
