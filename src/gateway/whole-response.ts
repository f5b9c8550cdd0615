/**
 * Which provider responses the gateway keeps for a retry: a 2xx whose message arrived whole.
 * Both wires a worker speaks are recognised: the Messages API (JSON `type: message`, or an
 * SSE stream that reached `message_stop` without an `error` event) and Chat Completions (JSON
 * `object: chat.completion`, or a stream of `data:` chunks closed by `data: [DONE]` with no
 * `data: {"error": …}` line: OpenAI-compatible servers report a failure mid-stream that way).
 * Anything else (an error, a cut-short stream, another endpoint's answer) is passed on and
 * never replayed.
 */

const CHAT_DONE = /^data: ?\[DONE\]\r?$/m;

/** A Chat Completions stream: closed by `[DONE]`, and no chunk of it an error. */
function wholeChatStream(text: string): boolean {
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]') continue;
    try {
      const chunk = JSON.parse(data) as { error?: unknown } | null;
      if (chunk === null || typeof chunk !== 'object' || chunk.error !== undefined) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** A response worth replaying (see the file header). */
export function isWholeResponse(status: number, contentType: string, body: Buffer): boolean {
  if (status < 200 || status >= 300) return false;
  const text = body.toString('utf8');
  if (contentType.includes('text/event-stream')) {
    if (CHAT_DONE.test(text)) return wholeChatStream(text);
    return /^event: message_stop\r?$/m.test(text) && !/^event: error\r?$/m.test(text);
  }
  try {
    const parsed = JSON.parse(text) as { type?: unknown; object?: unknown };
    return parsed.type === 'message' || parsed.object === 'chat.completion';
  } catch {
    return false;
  }
}
