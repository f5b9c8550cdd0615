/**
 * A sub-agent's output file (seed 001's `outputFile`): a virtual path its parent can `Read`
 * while the child runs and after it ends. No file exists at that path on any host: the
 * parent's workflow answers such a Read itself, from the child's durable state (its
 * workflow, by query), and refuses it to every other agent. Pure; workflow-safe.
 */
import { blocksOf, type MessageParam } from '../messages-api/anthropic';
import { clip } from '../base/text';

/** The folder every output file names (a path no tool reads from disk: the workflow answers). */
export const AGENT_OUTPUT_ROOT = '/forkflow-agent-output';

/** The output file of the agent `agentId` (its id, encoded: ids of root agents are chosen by callers). */
export function agentOutputFile(agentId: string): string {
  return `${AGENT_OUTPUT_ROOT}/${encodeURIComponent(agentId)}.output`;
}

/**
 * Whether `path` names something under the output root, however it is spelled (`//`, `/./`,
 * `..`): such a Read is the workflow's to answer, never the disk's.
 */
export function isAgentOutputPath(path: string): boolean {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return path.startsWith('/') && `/${parts[0] ?? ''}` === AGENT_OUTPUT_ROOT;
}

/** How much of a child's conversation its output file shows. */
export const AGENT_OUTPUT_LIMITS = {
  /** Characters shown; a longer output keeps its end, with a note of what came before. */
  shownChars: 30_000,
  /** Characters of one tool input or tool result shown. */
  blockChars: 2_000,
  /** The newest messages read from the child (a page at a time). */
  tailMessages: 60,
} as const;

/** What the parent's workflow asks of the activity that reads a child's output. */
export interface ReadAgentOutputInput {
  agentId: string;
  /** The child's result text as its parent recorded it: shown when the child cannot be asked (gone past retention). */
  recorded?: { status: string; text: string };
}

export interface ReadAgentOutputResult {
  /** False: neither the child nor its parent's record had anything to show. */
  found: boolean;
  text: string;
}

/** The head line of an output file. */
export interface AgentOutputHeader {
  agentId: string;
  state: string;
  turns: number;
  toolUses: number;
  totalTokens: number;
  doing?: string;
}

function blockText(b: ReturnType<typeof blocksOf>[number]): string | undefined {
  const limit = AGENT_OUTPUT_LIMITS.blockChars;
  switch (b.type) {
    case 'text':
      return b.text;
    case 'tool_use':
      return `[tool_use ${b.name}] ${clip(JSON.stringify(b.input ?? {}), limit)}`;
    case 'tool_result': {
      const content = typeof b.content === 'string' ? b.content : (b.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      return `[tool_result${b.is_error ? ' error' : ''}] ${clip(content, limit)}`;
    }
    case 'thinking':
    case 'redacted_thinking':
      return undefined;
    default:
      return `[${b.type}]`;
  }
}

/**
 * The text of an output file: a head line (state, turns, tool uses, tokens, what it is doing),
 * then the child's own messages in order — what it was told, what it said, the tools it
 * called and what they answered — `skipped` older messages noted first. Over
 * `shownChars` the end is kept.
 */
export function renderAgentOutput(header: AgentOutputHeader, messages: readonly MessageParam[], skipped = 0): string {
  const head = `Agent ${header.agentId}: ${header.state}; turns ${header.turns}; tool uses ${header.toolUses}; tokens ${header.totalTokens}${header.doing ? `; now: ${header.doing}` : ''}`;
  const body = messages.map((m) => {
    const parts = blocksOf(m).flatMap((b) => blockText(b) ?? []);
    return `--- ${m.role}\n${parts.join('\n')}`;
  });
  const text = [...(skipped > 0 ? [`[… ${skipped} earlier messages not shown]`] : []), ...body].join('\n');
  const max = AGENT_OUTPUT_LIMITS.shownChars;
  const kept = text.length > max ? `[… ${text.length - max} characters before this]${text.slice(-max)}` : text;
  return kept.length > 0 ? `${head}\n${kept}\n` : `${head}\n`;
}
