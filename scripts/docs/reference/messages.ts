/**
 * docs/reference/messages.md: the workflow types and every signal, query and update forkflow's
 * workflows handle, read from their definitions in src/shared/ (name, argument and answer
 * types as written, TSDoc), with the inputs the workflows validate and their JSON Schemas.
 */
import { constTable, messageDefinitions, type MessageKind } from '../definitions';
import { MESSAGE_SCHEMAS } from '../inputs';
import { code, generatedHeader, table } from './render';

const TITLES: Record<MessageKind, string> = { signal: 'Signals', query: 'Queries', update: 'Updates' };

export function messagesPage(): string {
  const defs = messageDefinitions();
  const types = constTable('src/shared/wire/constants.ts', 'WORKFLOW_TYPES');
  const sections = (['signal', 'update', 'query'] as MessageKind[]).map((kind) => {
    const rows = defs
      .filter((d) => d.kind === kind)
      .map((d) => [
        code(d.name),
        d.args.length ? d.args.map(code).join(', ') : '—',
        ...(kind === 'signal' ? [] : [code(d.answer ?? 'void')]),
        d.name in MESSAGE_SCHEMAS ? 'zod, [JSON Schema](schemas/message-inputs.json)' : '',
        `${d.doc || '—'} (${code(d.constant)}, ${d.file})`,
      ]);
    const head = kind === 'signal' ? ['name', 'argument', 'validated', 'description'] : ['name', 'argument', 'answer', 'validated', 'description'];
    return `## ${TITLES[kind]}\n\n${table(head, rows)}\n`;
  });
  return [
    generatedHeader(
      'Workflow types, signals, queries and updates',
      'the definitions in src/shared/ (`defineSignal`, `defineQuery`, `defineUpdate`) and src/shared/wire/constants.ts',
      'The names are the public contract: other SDKs and the `temporal` CLI send them by name (`temporal workflow signal --name sendMessage --input \'…\'`). Types are as the TypeScript definitions write them; the `forkflow` package exports the public ones ([API reference](api/forkflow.md)). Those marked *Internal* are forkflow\'s own traffic between its workflows and activities. An input the workflow validates and refuses never fails the workflow: an update is rejected, a signal\'s refusal is kept in `status.rejectedSignals`.',
    ),
    `## Workflow types\n\n${table(['type', 'key', 'description'], types.map((t) => [code(t.value), code(t.key), t.doc || '—']))}\n`,
    ...sections,
  ].join('\n');
}
