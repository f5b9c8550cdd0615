/**
 * docs/reference/contracts.md and docs/reference/schemas/*.json: the JSON contracts other
 * languages build against, as the code prints them (`forkflow schema`, `forkflow schema
 * --contract`, `forkflow dream schema`, and the zod schemas of the provider list, the eval spec
 * and the signal and update inputs), and where the status and result shapes are described.
 */
import { z } from 'zod';
import { forkInputJsonSchema } from '../../../src/shared/wire/fork-input-validation';
import { dreamConfigJsonSchema } from '../../../src/shared/dream/config';
import { providersConfigSchema } from '../../../src/shared/providers/providers';
import { serviceContractJsonSchemas } from '../../../src/shared/tools/service-contract';
import { evalSpecSchema } from '../../../src/testing/eval/spec';
import { MESSAGE_SCHEMAS } from '../inputs';
import { code, generatedHeader, table } from './render';

const draft7 = (schema: z.ZodType) => z.toJSONSchema(schema, { target: 'draft-7', io: 'input' });

/** Each schema file: its name under docs/reference/schemas/, what it is, what prints it, its content. */
export function schemaFiles(): { file: string; what: string; printedBy: string; json: unknown }[] {
  return [
    { file: 'fork-input.json', what: "`forkWorkflow`'s input ([fields](fork-input.md))", printedBy: '`forkflow schema`', json: forkInputJsonSchema() },
    { file: 'service-contract.json', what: 'the `forkflow.callTool` and `forkflow.hook` activities a service serves: call, result, hook call and answer', printedBy: '`forkflow schema --contract`', json: serviceContractJsonSchemas() },
    { file: 'dream-config.json', what: "`autoDreamWorkflow`'s input", printedBy: '`forkflow dream schema`', json: dreamConfigJsonSchema() },
    { file: 'providers.json', what: '`FORKFLOW_PROVIDERS` / `FORKFLOW_PROVIDERS_FILE`: the provider list', printedBy: '(src/shared/providers/providers.ts)', json: draft7(providersConfigSchema) },
    { file: 'eval-spec.json', what: '`forkflow eval <spec>` / `runEval(spec)`', printedBy: '(src/testing/eval/spec.ts)', json: draft7(evalSpecSchema) },
    { file: 'message-inputs.json', what: 'the inputs of the signals and updates the workflows validate, by name', printedBy: '(src/shared/wire/messages.ts, interrupt.ts)', json: Object.fromEntries(Object.entries(MESSAGE_SCHEMAS).map(([name, schema]) => [name, draft7(schema)])) },
  ];
}

export function contractsPage(): string {
  return [
    generatedHeader(
      'JSON contracts',
      'the zod schemas in src/ (the same JSON Schemas the CLI prints)',
      'What a service in another language (or the `temporal` CLI) sends and receives. Every input is validated with zod where it enters; the JSON Schemas below are generated from those zod schemas, so they cannot disagree with what is accepted.',
    ),
    `## Schemas\n\n${table(['file', 'what', 'printed by'], schemaFiles().map((s) => [`[${s.file}](schemas/${s.file})`, s.what, s.printedBy]))}\n`,
    [
      '## Status and result',
      '',
      `The \`status\` query answers a ${code('ForkStatus')} and a fork's workflow returns a ${code('ForkResult')} (a failed fork fails its workflow with \`ForkFailed\`, that result in \`details[0]\`): TypeScript interfaces of src/shared/wire/status.ts, every field described in the API reference ([ForkStatus](api/forkflow.md#forkstatus), [ForkResult](api/forkflow.md#forkresult)). The live stream's events are zod-validated (\`streamEventSchema\`, \`v: 1\`): [StreamEvent](api/forkflow.md#streamevent). Signal, query and update names and argument types: [messages.md](messages.md).`,
      '',
    ].join('\n'),
  ].join('\n');
}
