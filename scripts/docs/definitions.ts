/**
 * What src/ declares, read from its syntax (the TypeScript parser, no type checking): the
 * signal, query and update definitions of src/shared/ (`export const x = defineSignal<…>('name')`)
 * with their TSDoc, and the business failure types of src/shared/wire/failures.ts. The reference
 * pages print these and the docs checks test names against them, so neither can drift from
 * the code.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './markdown';
import { tsFiles } from './ts-files';

export type MessageKind = 'signal' | 'query' | 'update';

export interface MessageDefinition {
  kind: MessageKind;
  /** The wire name (what other SDKs and the `temporal` CLI send). */
  name: string;
  /** The exported constant, e.g. `sendMessageSignal`. */
  constant: string;
  file: string;
  /** Argument types as written (`[SendMessageArgs]` → `SendMessageArgs`). */
  args: string[];
  /** The answer's type as written (queries and updates). */
  answer?: string;
  /** Its TSDoc, flattened to one paragraph. */
  doc: string;
}

/** A node's TSDoc as one paragraph (tags and `*` margins dropped). */
export function docOf(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const last = ranges.filter((r) => source.text.startsWith('/**', r.pos)).pop();
  // A file's header comment (at its start, a blank line before the first statement) is not that statement's doc.
  if (!last || (last.pos === 0 && /\n\s*\n/.test(source.text.slice(last.end, node.getStart(source))))) return '';
  return source.text
    .slice(last.pos + 3, last.end - 2)
    .split('\n')
    .map((l) => l.replace(/^\s*\*\s?/, '').trim())
    .filter((l) => !l.startsWith('@'))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const parse = (path: string) => ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);

/** Every signal, query and update defined under src/shared/, in file order. */
export function messageDefinitions(root = ROOT): MessageDefinition[] {
  const out: MessageDefinition[] = [];
  for (const path of tsFiles(join(root, 'src', 'shared'))) {
    if (!/define(Signal|Query|Update)\b/.test(readFileSync(path, 'utf8'))) continue;
    const source = parse(path);
    for (const statement of source.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const decl of statement.declarationList.declarations) {
        const call = decl.initializer;
        if (!call || !ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) continue;
        const kind = { defineSignal: 'signal', defineQuery: 'query', defineUpdate: 'update' }[call.expression.text] as MessageKind | undefined;
        const nameArg = call.arguments[0];
        if (!kind || !nameArg || !ts.isStringLiteral(nameArg)) continue;
        const typeArgs = (call.typeArguments ?? []).map((t) => t.getText(source));
        // defineSignal<[Args]>, defineQuery<Answer, [Args]>, defineUpdate<Answer, [Args]>.
        const argList = kind === 'signal' ? typeArgs[0] : typeArgs[1];
        const args = argList ? argList.replace(/^\[|\]$/g, '').split(/,(?![^<{[(]*[>}\])])/).map((a) => a.trim()).filter(Boolean) : [];
        out.push({
          kind,
          name: nameArg.text,
          constant: decl.name.getText(source),
          file: relative(root, path).split('\\').join('/'),
          args,
          ...(kind === 'signal' ? {} : { answer: typeArgs[0] ?? 'void' }),
          doc: docOf(statement, source),
        });
      }
    }
  }
  return out;
}

/** An entry of a constant table (`export const NAME = { key: 'value', … } as const`). */
export interface TableEntry {
  key: string;
  /** The value as written (a string literal's text, else the expression's source). */
  value: string;
  doc: string;
}

/**
 * The entries of a constant object table of a file of src/, with their TSDoc: FAILURE
 * (src/shared/wire/failures.ts), EXIT (src/cli/exit.ts), WORKFLOW_TYPES (src/shared/wire/constants.ts).
 */
export function constTable(file: string, name: string, root = ROOT): TableEntry[] {
  const source = parse(join(root, file));
  const out: TableEntry[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === name) {
      let init = node.initializer;
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      if (!init || !ts.isObjectLiteralExpression(init)) throw new Error(`${file}: ${name} is not an object literal`);
      for (const p of init.properties) {
        if (!ts.isPropertyAssignment(p)) continue;
        const value = ts.isStringLiteral(p.initializer) ? p.initializer.text : p.initializer.getText(source);
        out.push({ key: p.name.getText(source), value, doc: docOf(p, source) });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (out.length === 0) throw new Error(`${file}: no ${name} table found`);
  return out;
}
