/** A reply's content blocks as the request params the next request sends back. */
import type Anthropic from '@anthropic-ai/sdk';
import type { ContentBlock } from '../../shared/messages-api/anthropic';

type ResponseBlock = Anthropic.Messages.ContentBlock;

/** Response blocks → request params: what the next request must send back, nothing more. */
export function toParamBlock(block: ResponseBlock): ContentBlock {
  switch (block.type) {
    case 'text':
      return block.citations ? { type: 'text', text: block.text, citations: block.citations } : { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    default:
      // Other blocks go back as they came, a provider compaction block among them (sent back
      // unchanged: its content, encrypted content and signature).
      return block as unknown as ContentBlock;
  }
}

