/**
 * `fork <id> --at-turn k`: the flags of the `fork` command (./agents.ts) that fork from a point
 * of another agent, with an optional counterfactual change, and the status rows that say where
 * an agent came from. The other time-travel commands are in ./time-travel.ts.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { ForkParams, PointOptions } from '../../client';
import type { ForkStatus } from '../../shared/wire/status';
import { CliError, EXIT } from '../exit';

/** `fork`'s flags that concern a point of another agent. */
export interface PointFlags {
  atTurn?: number;
  run?: string;
  replay?: boolean;
  model?: string;
  system?: string;
  tools?: string;
}

/** An integer for `--at-turn` / `--from-turn`: a negative one is refused here, before anything is asked. */
export const turnNumber = (name: string) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) throw new CliError(`${name} takes a turn: an integer ≥ 0 (0 is the agent's opening), got "${v}"`, EXIT.usage);
  return n;
};

export function addPointOptions(command: Command): Command {
  return command
    .option('--at-turn <k>', 'with an agent id: fork from the end of its turn k (0: its opening; default: as it stands)', turnNumber('--at-turn'))
    .option('--run <runId>', "with an agent id: only that run of the agent's chain and the runs before it")
    .option('--replay', 'with an agent id: add no directive; go on as the agent would have (the prompt only names it)')
    .option('--model <model>', 'counterfactual: another model than the agent’s')
    .option('--system <text>', 'counterfactual: another system prompt')
    .option('--tools <file>', 'counterfactual: another tool list (a JSON array of tool definitions)');
}

/** The fork's parameters for a point of `agentId`, with any counterfactual change; and where the point is. */
export function pointParams(agentId: string | undefined, flags: PointFlags, params: Partial<ForkParams>): { params: Partial<ForkParams>; point?: PointOptions } {
  const counterfactual = flags.model !== undefined || flags.system !== undefined || flags.tools !== undefined;
  if (!agentId) {
    if (flags.atTurn !== undefined || flags.run || flags.replay || counterfactual) throw new CliError('--at-turn, --run, --replay, --model, --system and --tools fork from an agent: name it (`forkflow fork <agentId> ...`).', EXIT.usage);
    return { params };
  }
  const out: Partial<ForkParams> = { ...params };
  if (flags.replay) out.replay = true;
  if (counterfactual) {
    out.counterfactual = true;
    if (flags.model) out.model = flags.model;
    if (flags.system) out.system = flags.system;
    if (flags.tools) {
      try {
        out.tools = JSON.parse(readFileSync(flags.tools, 'utf8')) as ForkParams['tools'];
      } catch (err) {
        throw new CliError(`--tools: cannot read a JSON array of tool definitions from ${flags.tools}: ${(err as Error).message}`, EXIT.usage);
      }
    }
  }
  return { params: out, point: { ...(flags.atTurn !== undefined ? { atTurn: flags.atTurn } : {}), ...(flags.run ? { runId: flags.run } : {}) } };
}

/** Status rows about where an agent came from. */
export function lineageRows(s: Pick<ForkStatus, 'origin' | 'counterfactual' | 'replay' | 'retry'>): [string, string | undefined][] {
  return [
    ['from', s.origin ? `${s.origin.agentId} at turn ${s.origin.turn} (run ${s.origin.runId})` : undefined],
    ['counterfactual', s.counterfactual ? `changed ${s.counterfactual.changed.join(', ') || 'nothing'}` : undefined],
    ['replay', s.replay ? 'yes' : undefined],
    ['retry', s.retry ? `from turn ${s.retry.fromTurn}, after ${s.retry.previous} (run ${s.retry.previousRunId})` : undefined],
  ];
}
