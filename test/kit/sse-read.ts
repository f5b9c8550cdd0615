/**
 * Reading the web view's stream endpoint (Server-Sent Events) as a browser does, for
 * test/e2e/web-view.test.ts: frames parsed as they arrive, and a reconnect that sends
 * `Last-Event-ID`.
 */

export type Relayed = { seq: number; type: string };

/**
 * Reads the stream endpoint until the relay closes it (after the agent's `done`), calling
 * `onEvent` as each event arrives. Every frame's `id` must be its event's seq.
 */
export async function readSse(url: string, headers: Record<string, string>, onEvent: (e: Relayed) => void = () => undefined): Promise<Relayed[]> {
  const res = await fetch(url, { headers });
  expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
  const events: Relayed[] = [];
  let buffer = '';
  let ended = false;
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (frame === 'event: end\ndata: {}') ended = true;
      if (!frame.startsWith('id: ')) continue;
      const [idLine, dataLine] = frame.split('\n');
      const event = JSON.parse(dataLine!.slice('data: '.length)) as Relayed;
      expect(idLine).toBe(`id: ${event.seq}`);
      events.push(event);
      onEvent(event);
    }
  }
  expect(ended).toBe(true);
  return events;
}

/**
 * While the child runs: one subscriber from the start, and a second that reconnects as a
 * browser does, with the seq of the first one's third event as its Last-Event-ID.
 */
export async function checkResume(url: string, auth: Record<string, string>): Promise<{ first: Relayed[]; resumed: Relayed[]; after: number }> {
  // The cut: the first text delta, so that the rest of the reply (more deltas, paced) follows it.
  let cut!: (seq: number) => void;
  const cutSeq = new Promise<number>((resolve) => (cut = resolve));
  const seen: Relayed[] = [];
  const first = readSse(url, auth, (e) => {
    seen.push(e);
    if (e.type === 'text-delta' && seen.filter((s) => s.type === 'text-delta').length === 1) cut(e.seq);
  });
  const after = await Promise.race([cutSeq, first.then(() => Promise.reject(new Error(`the stream ended after ${seen.length} events, none a text delta`)))]);
  const resumed = readSse(url, { ...auth, 'Last-Event-ID': String(after) });
  return { first: await first, resumed: await resumed, after };
}
