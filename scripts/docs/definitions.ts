/**
 * What src/ declares, read from its syntax (the TypeScript parser, no type checking): the
 * signal, query and update definitions of src/shared/ (`export const x = defineSignal<…>('name')`)
 * with their TSDoc, and the business failure types of src/shared/failures.ts. The reference
 * pages print these and the docs checks test names against them, so neither can drift from
 * the code.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './markdown';

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

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith('.ts') ? [path] : [];
    });
}

/** A node's TSDoc as one paragraph (tags and `*` margins dropped). */
export function docOf(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const last = ranges.filter((r) => source.text.startsWith('/**', r.pos)).pop();
  if (!last) return '';
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

export interface FailureDefinition {
  /** The ApplicationFailure `type` (a wire value). */
  type: string;
  /** The key of the FAILURE table in src/shared/failures.ts. */
  key: string;
  doc: string;
}

/** The business failures of src/shared/failures.ts's `FAILURE` table, with their TSDoc. */
export function failureDefinitions(root = ROOT): FailureDefinition[] {
  const source = parse(join(root, 'src', 'shared', 'failures.ts'));
  const out: FailureDefinition[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'FAILURE') {
      let init = node.initializer;
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      if (init && ts.isObjectLiteralExpression(init)) {
        for (const p of init.properties) {
          if (ts.isPropertyAssignment(p) && ts.isStringLiteral(p.initializer)) out.push({ type: p.initializer.text, key: p.name.getText(source), doc: docOf(p, source) });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}
