/**
 * An eval run's spec: cases forked from points of recorded agents — a prompt (a fork with that
 * directive) or a replay (no directive: the agent's own next request, with counterfactual
 * changes) — a concurrency limit, and a token budget for the whole run. Validated by zod before
 * anything starts.
 */
import { z } from 'zod';
import { systemParamSchema, thinkingConfigSchema, toolDefinitionSchema } from '../../shared/messages-api/anthropic';

export const evalCaseSchema = z.strictObject({
  /** Names the case in the report (unique in the spec). */
  id: z.string().min(1).max(100),
  /** The recorded agent the case forks from. */
  agentId: z.string().min(1).max(200),
  /** Fork from the end of this turn (0: the agent's opening); absent: from where the agent stands. */
  atTurn: z.number().int().min(0).optional(),
  /** Look only at this run of the agent's chain and the runs before it. */
  runId: z.string().min(1).max(200).optional(),
  /** The fork's directive. Absent: a replay — the case goes on from the point as the agent itself would have. */
  prompt: z.string().min(1).optional(),
  /** Counterfactual changes (each breaks the prompt cache by design; the report names them). */
  system: systemParamSchema.optional(),
  tools: z.array(toolDefinitionSchema).optional(),
  model: z.string().min(1).optional(),
  thinking: thinkingConfigSchema.optional(),
  /** The case's own limits (default: the spec's). */
  maxTurns: z.number().int().min(0).max(10_000).optional(),
  maxTokens: z.number().int().positive().optional(),
});
export type EvalCase = z.infer<typeof evalCaseSchema>;

export const evalSpecSchema = z.strictObject({
  /** Names the run: case agents are `eval-<name>-<case id>-<random>`, labelled `eval:<name>`. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a name of letters, digits, _ . - (at most 64)').default('eval'),
  cases: z
    .array(evalCaseSchema)
    .min(1)
    .max(10_000)
    .refine((cases) => new Set(cases.map((c) => c.id)).size === cases.length, { message: 'case ids must be unique' }),
  /** Cases running at once. */
  concurrency: z.number().int().min(1).max(100).default(4),
  /**
   * Tokens the whole run may charge (cache reads weighted 0.1, as budgets are). A case starts
   * only when its own budget fits in what is left; the first that does not stops the run, and
   * it and the cases after it are reported as not run.
   */
  budget: z.strictObject({ maxTokens: z.number().int().positive() }),
  /** Each case's token budget unless it gives its own. */
  caseBudget: z.number().int().positive().default(50_000),
  /** Each case's turn limit unless it gives its own. */
  maxTurns: z.number().int().min(0).max(10_000).default(10),
  /** Task queue of the case forks (default: the client's). */
  taskQueue: z.string().min(1).optional(),
});
export type EvalSpec = z.output<typeof evalSpecSchema>;
export type EvalSpecInput = z.input<typeof evalSpecSchema>;
