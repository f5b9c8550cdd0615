/** tool_result blocks as the model receives them: data, with `is_error` for what it should act on. */
import type { ToolResultBlock } from '../../shared/messages-api/anthropic';

export function errorResult(toolUseId: string, message: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content: message, is_error: true };
}

export function okResult(toolUseId: string, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content };
}

/** Structured results (sub-agent tools) as indented JSON: easy for a model to read and quote. */
export function jsonResult(toolUseId: string, value: unknown, isError = false): ToolResultBlock {
  const content = JSON.stringify(value, null, 2);
  return isError ? errorResult(toolUseId, content) : okResult(toolUseId, content);
}
