/**
 * The service tools the tests serve (through forkflow's own helper, `forkflow/worker`):
 * an order desk with a read-only lookup, a refund that must not run twice (each run leaves a
 * line in a ledger file), a slow idempotent step that says when it starts (a file), and the
 * hostile ones — one that throws, one that never answers, one with a 5 MB result. Used by an
 * in-process worker (test/workflow) and by a worker process of its own (tool-worker-process.ts).
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { defineHook, defineTool, type ServiceHook, type ServiceTool } from '../../src/worker/tools';

/** Every run of a tool appends `<tool> <tool_use_id> <attempt>` here (the tests count runs). */
export const LEDGER = 'ledger.txt';

export function orderDeskTools(stateDir: string): ServiceTool[] {
  const note = (tool: string, id: string, attempt: number) => appendFileSync(join(stateDir, LEDGER), `${tool} ${id} ${attempt}\n`);
  return [
    defineTool({
      name: 'lookup_order',
      description: 'Look an order up by its id.',
      input: z.object({ order_id: z.string().min(1).describe('The order id, like A-100.') }),
      readOnly: true,
      run: ({ order_id }, call) => {
        note('lookup_order', call.toolUseId, call.attempt);
        return `order ${order_id}: shipped, 2 items`;
      },
    }),
    defineTool({
      name: 'refund_order',
      description: 'Refund an order (once!).',
      input: z.object({ order_id: z.string().min(1), amount: z.number().positive() }),
      run: ({ order_id, amount }, call) => {
        note('refund_order', call.toolUseId, call.attempt);
        return { content: [{ type: 'text', text: `refunded ${amount} on ${order_id}` }] };
      },
    }),
    defineTool({
      name: 'slow_step',
      description: 'A slow, idempotent computation.',
      input: z.object({ ms: z.number().int().min(0).max(60_000), label: z.string() }),
      idempotent: true,
      heartbeat: '2s',
      run: async ({ ms, label }, call) => {
        note('slow_step', call.toolUseId, call.attempt);
        writeFileSync(join(stateDir, `started-${label}-${call.agentId}-${call.attempt}`), String(process.pid));
        await new Promise((resolve) => setTimeout(resolve, ms));
        return `step ${label} done`;
      },
    }),
    defineTool({
      name: 'slow_charge',
      description: 'A slow charge that must not run twice.',
      input: z.object({ ms: z.number().int().min(0).max(60_000), label: z.string() }),
      heartbeat: '2s',
      run: async ({ ms, label }, call) => {
        note('slow_charge', call.toolUseId, call.attempt);
        writeFileSync(join(stateDir, `started-${label}-${call.agentId}-${call.attempt}`), String(process.pid));
        await new Promise((resolve) => setTimeout(resolve, ms));
        return `charge ${label} done`;
      },
    }),
    defineTool({
      name: 'explode',
      description: 'Always fails.',
      input: z.object({}),
      run: () => {
        throw new Error('inventory database is down');
      },
    }),
    defineTool({
      name: 'hang',
      description: 'Never answers.',
      input: z.object({}),
      run: (_input, call) =>
        new Promise<string>((_resolve, reject) => {
          call.signal.addEventListener('abort', () => reject(new Error('cancelled')));
        }),
    }),
    defineTool({
      name: 'big_report',
      description: 'Returns 600 KB, under its limit.',
      input: z.object({}),
      readOnly: true,
      run: () => 'y'.repeat(600_000),
    }),
    defineTool({
      name: 'huge',
      description: 'Returns 5 MB.',
      input: z.object({}),
      readOnly: true,
      maxResultBytes: 4 << 20,
      run: () => 'x'.repeat(5 * 1024 * 1024),
    }),
  ];
}

/** Hooks of the order desk's policy service: no refunds over 100, amounts in cents, a note after lookups and at start, and one more turn at the first stop. */
export function orderDeskHooks(stateDir: string): ServiceHook[] {
  const seen = (event: string, line: string) => appendFileSync(join(stateDir, 'hooks.txt'), `${event} ${line}\n`);
  let stops = 0;
  return [
    defineHook({
      event: 'PreToolUse',
      run: (call) => {
        seen('PreToolUse', `${call.tool} ${JSON.stringify(call.input)}`);
        const amount = call.input?.amount;
        if (call.tool === 'refund_order' && typeof amount === 'number' && amount > 100) return { decision: 'deny', message: 'refunds over 100 need a manager' };
        if (call.tool === 'lookup_order' && call.input?.order_id === 'legacy-7') return { input: { order_id: 'A-7' } };
        return {};
      },
    }),
    defineHook({ event: 'PostToolUse', run: (call) => (seen('PostToolUse', `${call.tool} ${call.result?.is_error}`), call.tool === 'lookup_order' ? { additional_context: 'Orders ship from Lyon.' } : {}) }),
    defineHook({ event: 'SubagentStart', run: (call) => (seen('SubagentStart', call.agent_id), { additional_context: 'Customer tier: gold.' }) }),
    defineHook({ event: 'Stop', run: (call) => (seen('Stop', call.text ?? ''), stops++ === 0 ? { decision: 'block', message: 'Also say goodbye.\n@reply goodbye' } : {}) }),
    defineHook({ event: 'SubagentStop', run: (call) => (seen('SubagentStop', `${call.status} ${call.text ?? ''}`), {}) }),
  ];
}
