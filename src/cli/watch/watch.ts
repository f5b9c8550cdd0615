/**
 * `forkflow watch <id>`: an agent's live stream in the terminal, until it ends. With `tree`,
 * the agent's tree too — one line per agent of its subtree, refreshed from visibility — above
 * the focused agent's text (redrawn in place on a terminal, appended when piped).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ForkflowClient } from '../../client';
import type { AgentRow } from '../../client/rows';
import type { StreamEvent } from '../../shared/streams/stream-events';
import { StreamRenderer, treeLines } from './render';

export interface WatchOptions {
  fromSeq?: number;
  /** Print each event as a JSON line instead of rendering it. */
  json?: boolean;
  signal?: AbortSignal;
  out?: (s: string) => void;
}

/** Renders (or prints as JSON lines) one agent's stream; returns the last event seen. */
export async function watchStream(client: ForkflowClient, agentId: string, opts: WatchOptions = {}): Promise<StreamEvent | undefined> {
  const out = opts.out ?? ((s: string) => void process.stdout.write(s));
  const renderer = new StreamRenderer(out);
  let last: StreamEvent | undefined;
  for await (const e of client.stream(agentId, { ...(opts.fromSeq !== undefined ? { fromSeq: opts.fromSeq } : {}), ...(opts.signal ? { signal: opts.signal } : {}) })) {
    last = e;
    if (opts.json) out(`${JSON.stringify(e)}\n`);
    else renderer.render(e);
  }
  return last;
}

/** The agents of `agentId`'s subtree (itself included). */
function subtree(agents: AgentRow[], agentId: string): AgentRow[] {
  const keep = new Set([agentId]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const a of agents) {
      if (!keep.has(a.agentId) && a.parentId && keep.has(a.parentId)) {
        keep.add(a.agentId);
        grew = true;
      }
    }
  }
  return agents.filter((a) => keep.has(a.agentId));
}

export interface TreeWatchOptions extends WatchOptions {
  /** The agent whose text is shown (default: the watched agent). */
  focus?: string;
  /** How often the tree is re-read (default 1000 ms). */
  intervalMs?: number;
  /** Redraw in place (a terminal) rather than append. */
  tty?: boolean;
  /** Terminal height for the in-place frame. */
  rows?: number;
}

export async function watchTree(client: ForkflowClient, agentId: string, opts: TreeWatchOptions = {}): Promise<void> {
  const out = opts.out ?? ((s: string) => void process.stdout.write(s));
  const focus = opts.focus ?? agentId;
  const rootId = (await client.status(agentId)).rootAgentId;
  let lines: string[] = [];
  let text = '';
  // Without a terminal, tree lines wait while streamed text is mid-line, so a reply reads whole.
  let midLine = false;
  let heldTree: string | undefined;
  const frame = () => {
    const room = Math.max(3, (opts.rows ?? 24) - lines.length - 2);
    const tail = text.split('\n').slice(-room).join('\n');
    out(`\x1b[H\x1b[J${lines.join('\n')}\n${'─'.repeat(40)} ${focus}\n${tail}`);
  };
  const readTree = async () => {
    const next = treeLines(subtree((await client.tree(rootId)).agents, agentId), focus);
    if (next.join('\n') === lines.join('\n')) return;
    lines = next;
    if (opts.tty) return frame();
    const block = `${lines.map((l) => `tree ${l}`).join('\n')}\n`;
    if (midLine) heldTree = block;
    else out(block);
  };
  const stop = new AbortController();
  const refresher = (async () => {
    while (!stop.signal.aborted) {
      // Visibility may lag or the server blip: the next look tries again.
      await readTree().catch(() => undefined);
      await sleep(opts.intervalMs ?? 1000, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  })();
  try {
    await watchStream(client, focus, {
      ...opts,
      out: (s) => {
        if (!opts.tty) {
          out(s);
          if (s !== '') midLine = !s.endsWith('\n');
          if (!midLine && heldTree) {
            out(heldTree);
            heldTree = undefined;
          }
          return;
        }
        text += s;
        frame();
      },
    });
  } finally {
    stop.abort();
    await refresher;
  }
  if (heldTree) out(`${midLine ? '\n' : ''}${heldTree}`);
  midLine = false;
  // The focused agent ended: one last look, so the lines show how the tree stands now.
  await readTree().catch(() => undefined);
  if (opts.tty) out('\n');
}
