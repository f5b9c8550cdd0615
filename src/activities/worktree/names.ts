/**
 * Names derived from an agent id: the directory name of its worktree and its branch.
 * Deterministic (a retried activity finds what the first attempt made) and safe as a
 * git ref, a file name and a command-line argument whatever the id contains.
 */
import { createHash } from 'node:crypto';
import { WorktreeError } from './errors';

/** Every branch forkflow creates starts with this; `finishWorktree` deletes no other. */
export const BRANCH_PREFIX = 'forkflow/';

/**
 * Ids already in this form are used as they are. Lower case only, so two ids differing
 * in case cannot meet on a case-insensitive file system (refs are files there too); no
 * dots, so an id used as-is can never look like a mangled one (those contain a dot).
 */
const PLAIN_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SLUG_MAX = 40;
const HASH_HEX = 12;

/**
 * A file-name-safe, ref-safe form of `agentId`: the id itself when it is short, lower
 * case and plain; otherwise a readable slug plus `.` and 12 hex digits of the id's
 * SHA-256, so distinct ids stay distinct (`../x` → `x.<hash>`, `Fix bug` → `fix-bug.<hash>`).
 *
 * @throws {WorktreeError} `invalid-agent-id` for anything but a non-empty string.
 */
export function safeAgentId(agentId: string): string {
  if (typeof agentId !== 'string' || agentId.length === 0) {
    throw new WorktreeError('invalid-agent-id', `The agent id must be a non-empty string, got ${JSON.stringify(agentId) ?? String(agentId)}.`);
  }
  if (PLAIN_ID.test(agentId)) return agentId;
  const slug = agentId
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // accents split off by NFKD: `é` → `e`
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .slice(0, SLUG_MAX)
    .replace(/^[-_]+|-+$/g, '');
  const hash = createHash('sha256').update(agentId, 'utf8').digest('hex').slice(0, HASH_HEX);
  return `${slug || 'agent'}.${hash}`;
}

/**
 * The branch of an agent's worktree: `forkflow/<safe id>` (see {@link safeAgentId}).
 * Same id, same branch; distinct ids, distinct branches.
 *
 * @example branchNameFor('fork-review-1a2b') // 'forkflow/fork-review-1a2b'
 * @example branchNameFor('../x')             // 'forkflow/x.<12 hex digits>'
 * @throws {WorktreeError} `invalid-agent-id` for anything but a non-empty string.
 */
export function branchNameFor(agentId: string): string {
  return `${BRANCH_PREFIX}${safeAgentId(agentId)}`;
}
