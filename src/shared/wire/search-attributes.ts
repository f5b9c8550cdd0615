/**
 * forkflow's custom search attributes: what operators filter on in the Web UI and
 * `forkflow list`. One table, used by workflows (upserts), the dev server (registration),
 * the worker bootstrap (registration on a real cluster) and the client (queries).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA = {
  agentId: defineSearchAttributeKey('ForkAgentId', SearchAttributeType.KEYWORD),
  parentId: defineSearchAttributeKey('ForkParentId', SearchAttributeType.KEYWORD),
  /** A fork from a point of another agent: the run that held the point, and the turn (time travel). */
  parentRun: defineSearchAttributeKey('ForkParentRun', SearchAttributeType.KEYWORD),
  parentTurn: defineSearchAttributeKey('ForkParentTurn', SearchAttributeType.INT),
  rootId: defineSearchAttributeKey('ForkRootId', SearchAttributeType.KEYWORD),
  label: defineSearchAttributeKey('ForkLabel', SearchAttributeType.KEYWORD),
  name: defineSearchAttributeKey('ForkName', SearchAttributeType.KEYWORD),
  querySource: defineSearchAttributeKey('ForkQuerySource', SearchAttributeType.KEYWORD),
  state: defineSearchAttributeKey('ForkState', SearchAttributeType.KEYWORD),
  memoryScope: defineSearchAttributeKey('ForkMemoryScope', SearchAttributeType.KEYWORD),
  turns: defineSearchAttributeKey('ForkTurns', SearchAttributeType.INT),
  totalTokens: defineSearchAttributeKey('ForkTotalTokens', SearchAttributeType.INT),
} as const;

/** `Name=Type` pairs in the form `temporal server start-dev --search-attribute` takes. */
export function searchAttributeFlags(): string[] {
  const cliType: Record<string, string> = {
    [SearchAttributeType.KEYWORD]: 'Keyword',
    [SearchAttributeType.INT]: 'Int',
    [SearchAttributeType.TEXT]: 'Text',
    [SearchAttributeType.DOUBLE]: 'Double',
    [SearchAttributeType.BOOL]: 'Bool',
    [SearchAttributeType.DATETIME]: 'Datetime',
    [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
  };
  return Object.values(SA).map((k) => `${k.name}=${cliType[k.type]}`);
}
