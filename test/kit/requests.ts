/** Reading what the offline model received: parsed request bodies from its log. */
import type { MessageParam, MessagesRequest } from '../../src/shared/messages-api/anthropic';
import type { OfflineModel, RequestLogEntry } from '../../src/offline';

export function messageRequests(model: OfflineModel): RequestLogEntry[] {
  return model.log.entries().filter((e) => e.path === '/v1/messages');
}

/** The request body (an entry is logged before its body has arrived: then an empty request). */
export function bodyOf(entry: RequestLogEntry): MessagesRequest {
  return (entry.body as MessagesRequest | undefined) ?? { model: '', max_tokens: 0, messages: [] };
}

export function lastMessage(entry: RequestLogEntry): MessageParam {
  const messages = bodyOf(entry).messages;
  return messages[messages.length - 1]!;
}
