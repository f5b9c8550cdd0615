/**
 * Task notifications: how a background sub-agent's end reaches its parent's conversation.
 * Everything embedded is escaped, so a child's output cannot forge the markup or close the
 * tag early.
 */
export interface TaskNotification {
  taskId: string;
  /** The tool call that started the task (seed 001's `<tool-use-id>`). */
  toolUseId?: string;
  /** Where its output is (seed 001's `<output-file>`): a background shell task's file on its host, a sub-agent's output file (src/shared/tree/agent-output.ts). */
  outputFile?: string;
  name?: string;
  /** `stalled`: a background shell task that has written nothing for a while (it still runs). */
  status: 'completed' | 'failed' | 'killed' | 'timeout' | 'stalled';
  /** One line for people and the model. */
  summary: string;
  result?: string;
  error?: string;
  /** Absent for a shell task (no model usage): the usage line then has its duration only. */
  totalTokens?: number;
  toolUses?: number;
  durationMs: number;
  worktree?: { path: string; branch: string };
}

export function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function unescapeText(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export const TASK_NOTIFICATION_TAG = 'task-notification';

export function renderTaskNotification(n: TaskNotification): string {
  const lines = [
    `<${TASK_NOTIFICATION_TAG}>`,
    `<task-id>${escapeText(n.taskId)}</task-id>`,
    ...(n.toolUseId ? [`<tool-use-id>${escapeText(n.toolUseId)}</tool-use-id>`] : []),
    ...(n.outputFile ? [`<output-file>${escapeText(n.outputFile)}</output-file>`] : []),
    ...(n.name ? [`<name>${escapeText(n.name)}</name>`] : []),
    `<status>${n.status}</status>`,
    `<summary>${escapeText(n.summary)}</summary>`,
    ...(n.result !== undefined ? [`<result>${escapeText(n.result)}</result>`] : []),
    ...(n.error !== undefined ? [`<error>${escapeText(n.error)}</error>`] : []),
    n.totalTokens === undefined ? `<usage>duration_ms: ${n.durationMs}</usage>` : `<usage>total_tokens: ${n.totalTokens}; tool_uses: ${n.toolUses ?? 0}; duration_ms: ${n.durationMs}</usage>`,
    ...(n.worktree ? [`<worktree path="${escapeText(n.worktree.path)}" branch="${escapeText(n.worktree.branch)}"/>`] : []),
    `</${TASK_NOTIFICATION_TAG}>`,
  ];
  return lines.join('\n');
}

/** The headline fields of a rendered notification, or undefined when `text` is not one. */
export function readTaskNotification(text: string): Pick<TaskNotification, 'taskId' | 'status' | 'summary'> | undefined {
  if (!text.startsWith(`<${TASK_NOTIFICATION_TAG}>`)) return undefined;
  const field = (tag: string) => unescapeText(new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(text)?.[1] ?? '');
  return { taskId: field('task-id'), status: field('status') as TaskNotification['status'], summary: field('summary') };
}
