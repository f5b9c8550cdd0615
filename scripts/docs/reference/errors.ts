/**
 * docs/reference/errors.md: the errors a user of forkflow meets, from the code: the client's
 * named error classes (what `forkflow` exports whose name ends in `Error`, with their TSDoc),
 * the business failures workflows raise (src/shared/wire/failures.ts `FAILURE`), the failure types
 * activities and workers raise (found by failure-scan.ts), and the CLI's exit codes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { constTable, docOf } from '../definitions';
import { ROOT } from '../markdown';
import { raisedFailures } from './failure-scan';
import { code, generatedHeader, table } from './render';

interface ErrorClass {
  name: string;
  extends: string;
  file: string;
  doc: string;
}

const parse = (path: string) => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
const moduleFile = (from: string, spec: string) => [`${join(dirname(from), spec)}.ts`, join(dirname(from), spec, 'index.ts')].find((f) => existsSync(f));

/** Classes named `*Error` that an entry point exports (directly, by `export { … } from`, or by `export * from`). */
function exportedErrors(entry: string, root = ROOT): ErrorClass[] {
  const out = new Map<string, ErrorClass>();
  const seen = new Set<string>();
  const visitFile = (path: string, only?: Set<string>) => {
    const key = `${path}:${only ? [...only].join(',') : '*'}`;
    if (seen.has(key)) return;
    seen.add(key);
    const source = parse(path);
    for (const s of source.statements) {
      if (ts.isClassDeclaration(s) && s.name && /Error$/.test(s.name.text) && s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) && (!only || only.has(s.name.text))) {
        const heritage = s.heritageClauses?.[0]?.types[0]?.expression.getText(source) ?? '';
        out.set(s.name.text, { name: s.name.text, extends: heritage, file: relative(root, path).split('\\').join('/'), doc: docOf(s, source) });
      }
      if (ts.isExportDeclaration(s) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) && !s.isTypeOnly) {
        const target = moduleFile(path, s.moduleSpecifier.text);
        if (!target) continue;
        if (!s.exportClause) visitFile(target, only);
        else if (ts.isNamedExports(s.exportClause)) {
          const names = s.exportClause.elements.filter((e) => !e.isTypeOnly && /Error$/.test(e.name.text)).map((e) => (e.propertyName ?? e.name).text);
          if (names.length) visitFile(target, new Set(names));
        }
      }
    }
  };
  visitFile(join(root, entry));
  return [...out.values()];
}

export function errorsPage(): string {
  const classes = exportedErrors('src/client/index.ts');
  const failures = constTable('src/shared/wire/failures.ts', 'FAILURE');
  const raised = raisedFailures(['activities', 'worker', 'workflows', 'gateway', 'payloads']);
  const exits = constTable('src/cli/exit.ts', 'EXIT');
  return [
    generatedHeader(
      'Errors',
      'the code: the error classes `forkflow` exports, src/shared/wire/failures.ts, the ApplicationFailure types raised in src/, src/cli/exit.ts',
      'What can go wrong, by name. The client throws named errors (check with `instanceof` or the `is*` helpers); a workflow that fails does so with an `ApplicationFailure` whose `type` is one of the business failures below (non-retryable, details in `details[0]`); activities classify what they meet into failure types that Temporal retries or not. How each is handled: [Crashes and durability](../guides/crashes.md), [Fork from a service](../guides/fork-from-a-service.md).',
    ),
    `## Client errors (\`forkflow\`)\n\n${table(['error', 'extends', 'when'], classes.map((c) => [code(c.name), c.extends ? code(c.extends) : '', c.doc || `(${c.file})`]))}\n`,
    `## Workflow failures\n\nThe \`type\` of the \`ApplicationFailure\` a workflow fails with (or an update is rejected with). Wire values: recorded in histories and read by older clients, never renamed.\n\n${table(['type', 'when'], failures.map((f) => [code(f.value), f.doc]))}\n`,
    `## Activity and worker failure types\n\nThe \`type\` of failures raised by activities, workers and workflow handlers besides the ones above. Retryable ones are retried by Temporal under the activity's retry policy (model calls: rate limits and overload without a limit, other errors a few times); \`depends\` means the raising code decides per case (e.g. by the provider's HTTP status).\n\n${table(['type', 'retryable', 'raised in'], raised.map((r) => [code(r.type), r.retryable, r.files.map(code).join(', ')]))}\n`,
    `## CLI exit codes\n\n${table(['code', 'name', 'meaning'], exits.map((e) => [e.value, code(e.key), e.doc]))}\n`,
  ].join('\n');
}
