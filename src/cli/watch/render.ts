/**
 * `forkflow watch`: how stream events read in a terminal. Text and thinking are written as
 * they arrive; tool calls, results, messages and turn ends get a line each; a retried model
 * call says the text above it was abandoned. And `--tree`'s lines, one per agent of a tree.
 * Pure: it writes through the function it is given.
 */
import type { AgentRow } from '../../client/rows';
import type { StreamEvent } from '../../shared/streams/stream-events';
import { oneLine } from '../../shared/base/text';

export class StreamRenderer {
  /** Whether the cursor is at the start of a line (so a marker line does not glue onto text). */
  private atLineStart = true;
  /** The content block being written (`text:0`, `thinking:1`), to label a block's first delta. */
  private block?: string;
  /**
   * Each turn's text as written from deltas (of its live attempt, blocks joined by newlines);
   * `turn-end` carries the reply whole, and what the deltas missed is written from it.
   */
  private readonly streamedText = new Map<number, { attempt: number; blocks: Map<number, string> }>();

  constructor(private readonly write: (s: string) => void) {}

  render(e: StreamEvent): void {
    switch (e.type) {
      case 'turn-start':
        this.line(e.attempt > 1 ? `── turn ${e.turn}, attempt ${e.attempt} ──` : `── turn ${e.turn}${e.model ? ` · ${e.model}` : ''} ──`);
        return;
      case 'attempt-abandoned':
        this.streamedText.delete(e.turn);
        this.line(`(the model call was retried: the text of attempt ${e.abandonedAttempt} above is abandoned)`);
        return;
      case 'text-delta': {
        const t = this.streamedText.get(e.turn);
        if (t && e.attempt < t.attempt) return;
        const blocks = t && t.attempt === e.attempt ? t.blocks : new Map<number, string>();
        blocks.set(e.index, (blocks.get(e.index) ?? '') + e.text);
        this.streamedText.set(e.turn, { attempt: e.attempt, blocks });
        this.text(`text:${e.index}`, '', e.text);
        return;
      }
      case 'thinking-delta':
        this.text(`thinking:${e.index}`, '(thinking) ', e.thinking);
        return;
      case 'tool-input-delta':
        return; // the call shows whole as `tool-use` once the reply is final
      case 'tool-progress':
        this.line(`… ${e.name ?? e.toolUseId}: ${e.progress}${e.total !== undefined ? `/${e.total}` : ''}${e.message ? ` ${oneLine(e.message, 100)}` : ''}`);
        return;
      case 'tool-use':
        this.line(`→ ${e.name} ${oneLine(JSON.stringify(e.input ?? {}), 120)}`);
        return;
      case 'tool-result':
        this.line(`${e.isError ? '✗' : '←'} ${e.name ?? e.toolUseId}: ${oneLine(e.preview, 120) || '(empty)'}${e.chars > e.preview.length ? ` (${e.chars} chars)` : ''}`);
        return;
      case 'message':
        this.line(`✉ ${e.from ? `from ${e.from}` : 'message'}${e.summary ? ` (${oneLine(e.summary, 60)})` : ''}: ${oneLine(e.preview, 120)}`);
        return;
      case 'turn-end': {
        // A call whose deltas this subscriber did not get (it came late, or nobody was watching
        // when the call began), or got only the start of: its reply, as the workflow recorded it.
        const t = this.streamedText.get(e.turn);
        const streamed = t ? [...t.blocks.entries()].sort(([a], [b]) => a - b).map(([, s]) => s).join('\n') : '';
        const whole = e.text !== undefined && e.textChars === e.text.length;
        if (e.text && !t) this.line(`${e.text}${whole ? '' : ` … (${e.textChars} chars)`}`);
        else if (e.text && whole && e.text !== streamed && e.text.startsWith(streamed)) this.text(this.block ?? 'text:rest', '', e.text.slice(streamed.length));
        this.line(`· turn ${e.turn} ${e.stopReason}${e.usage ? ` · in ${e.usage.inputTokens} · cache read ${e.usage.cacheReadInputTokens} · out ${e.usage.outputTokens}` : ''}`);
        return;
      }
      case 'compaction':
        this.line(`⇣ context compacted by ${e.by} (${e.reason}) before turn ${e.turn}: ${e.tokensBefore} tokens${e.tokensAfter !== undefined ? ` → ${e.tokensAfter}` : ''}; requests start at message ${e.at}${e.usage ? ` · summarising: in ${e.usage.inputTokens + e.usage.cacheReadInputTokens + e.usage.cacheCreationInputTokens} · out ${e.usage.outputTokens}` : ''}`);
        return;
      case 'failover':
        this.line(`⇄ ${e.reason === 'recovered' ? 'back on' : 'failover to'} ${e.to.provider}/${e.to.model} from ${e.from.provider}/${e.from.model} (turn ${e.turn}): ${oneLine(e.reason, 160)}`);
        return;
      case 'done':
        this.line(`■ ${e.status}${e.stopReason ? ` (${e.stopReason})` : ''}${e.error ? `: ${oneLine(e.error, 200)}` : ''}`);
        return;
    }
  }

  private text(block: string, label: string, s: string): void {
    if (this.block !== block) {
      if (!this.atLineStart) this.write('\n');
      this.write(label);
      this.block = block;
    }
    if (s === '') return;
    this.write(s);
    this.atLineStart = s.endsWith('\n');
  }

  private line(s: string): void {
    this.write(`${this.atLineStart ? '' : '\n'}${s}\n`);
    this.atLineStart = true;
    this.block = undefined;
  }
}

/** One line per agent of a tree, children indented under their parent; `focus` marked. */
export function treeLines(agents: AgentRow[], focus: string): string[] {
  const byParent = new Map<string | undefined, AgentRow[]>();
  const ids = new Set(agents.map((a) => a.agentId));
  for (const a of agents) {
    // An agent whose parent is not listed (visibility lag, or the root) hangs at the top.
    const parent = a.parentId && ids.has(a.parentId) ? a.parentId : undefined;
    byParent.set(parent, [...(byParent.get(parent) ?? []), a]);
  }
  const out: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const a of (byParent.get(parent) ?? []).sort((x, y) => x.startTime.localeCompare(y.startTime))) {
      const facts = [a.state ?? a.temporalStatus.toLowerCase(), a.turns !== undefined ? `${a.turns} turns` : undefined, a.totalTokens !== undefined ? `${a.totalTokens} tokens` : undefined].filter(Boolean);
      out.push(`${a.agentId === focus ? '▶' : ' '} ${'  '.repeat(depth)}${a.agentId}${a.color ? ` (${a.color})` : ''}${a.label ? ` [${a.label}]` : ''} · ${facts.join(' · ')}`);
      walk(a.agentId, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}
