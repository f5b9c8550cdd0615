/**
 * The ApplicationFailure types src/ raises outside the FAILURE table, found in its syntax:
 * every `ApplicationFailure.create({ type })`, `.nonRetryable(message, type)` and
 * `.retryable(message, type)`, with the type expression followed to the string literals it
 * can be (constants, imported constants, `A.b` of a constant table, `A[k]` of a lookup table,
 * both sides of `?:` and `??`; a template becomes `prefix…`). A type read from something
 * already raised (`failure.type`, a parameter) passes an existing type on and is not listed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../markdown';
import { tsFiles } from '../ts-files';

export interface RaisedFailure {
  type: string;
  /** `yes`, `no`, or `depends` (decided where it is raised). */
  retryable: 'yes' | 'no' | 'depends';
  files: string[];
}

const sources = new Map<string, ts.SourceFile>();
function sourceOf(path: string): ts.SourceFile {
  let s = sources.get(path);
  if (!s) sources.set(path, (s = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true)));
  return s;
}

/** The declaration an identifier names: a variable of the file (nearest before it), or an import followed to its file. */
function declarationOf(id: ts.Identifier, source: ts.SourceFile): { node: ts.Expression; source: ts.SourceFile } | undefined {
  const name = id.text;
  let found: ts.VariableDeclaration | undefined;
  const visit = (n: ts.Node) => {
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name && n.initializer && n.getStart(source) < id.getStart(source)) found = n;
    ts.forEachChild(n, visit);
  };
  visit(source);
  if (found?.initializer) return { node: found.initializer, source };
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const named = statement.importClause?.namedBindings;
    if (!named || !ts.isNamedImports(named) || !named.elements.some((e) => e.name.text === name)) continue;
    const spec = statement.moduleSpecifier.text;
    if (!spec.startsWith('.')) return undefined;
    const base = join(dirname(source.fileName), spec);
    const file = [`${base}.ts`, join(base, 'index.ts')].find((f) => existsSync(f));
    if (!file) return undefined;
    const target = sourceOf(file);
    let exported: ts.Expression | undefined;
    const find = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === name && n.initializer) exported = n.initializer;
      ts.forEachChild(n, find);
    };
    find(target);
    return exported ? { node: exported, source: target } : undefined;
  }
  return undefined;
}

const unwrap = (e: ts.Expression): ts.Expression => (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e) ? unwrap(e.expression) : e);

/** The object literal an expression names, if it names one. */
function objectOf(e: ts.Expression, source: ts.SourceFile): { node: ts.ObjectLiteralExpression; source: ts.SourceFile } | undefined {
  const x = unwrap(e);
  if (ts.isObjectLiteralExpression(x)) return { node: x, source };
  if (ts.isIdentifier(x)) {
    const d = declarationOf(x, source);
    return d ? objectOf(d.node, d.source) : undefined;
  }
  return undefined;
}

/** The strings a type expression can be. */
function stringsOf(e: ts.Expression, source: ts.SourceFile, depth = 0): string[] {
  if (depth > 8) return [];
  const x = unwrap(e);
  if (ts.isStringLiteral(x) || ts.isNoSubstitutionTemplateLiteral(x)) return [x.text];
  if (ts.isTemplateExpression(x)) return [`${x.head.text}…`];
  if (ts.isConditionalExpression(x)) return [...stringsOf(x.whenTrue, source, depth + 1), ...stringsOf(x.whenFalse, source, depth + 1)];
  if (ts.isBinaryExpression(x) && (x.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || x.operatorToken.kind === ts.SyntaxKind.BarBarToken)) {
    return [...stringsOf(x.left, source, depth + 1), ...stringsOf(x.right, source, depth + 1)];
  }
  if (ts.isIdentifier(x)) {
    const d = declarationOf(x, source);
    return d ? stringsOf(d.node, d.source, depth + 1) : [];
  }
  if (ts.isPropertyAccessExpression(x)) {
    const table = objectOf(x.expression, source);
    const prop = table?.node.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(table.source) === x.name.text) as ts.PropertyAssignment | undefined;
    return prop && table ? stringsOf(prop.initializer, table.source, depth + 1) : [];
  }
  if (ts.isElementAccessExpression(x)) {
    const table = objectOf(x.expression, source);
    return table ? table.node.properties.flatMap((p) => (ts.isPropertyAssignment(p) ? stringsOf(p.initializer, table.source, depth + 1) : [])) : [];
  }
  return [];
}

/** Every failure type raised in `dirs` of src/ (the FAILURE table's own are left to it). */
export function raisedFailures(dirs: string[], root = ROOT): RaisedFailure[] {
  const byType = new Map<string, { retry: Set<string>; files: Set<string> }>();
  for (const path of dirs.flatMap((d) => tsFiles(join(root, 'src', d)))) {
    if (!readFileSync(path, 'utf8').includes('ApplicationFailure.')) continue;
    const source = sourceOf(path);
    const file = relative(root, path).split('\\').join('/');
    const visit = (n: ts.Node) => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.expression.getText(source) === 'ApplicationFailure') {
        const how = n.expression.name.text;
        let typeExpr: ts.Expression | undefined;
        let retry: string | undefined;
        if (how === 'create' && n.arguments[0] && ts.isObjectLiteralExpression(n.arguments[0])) {
          for (const p of n.arguments[0].properties) {
            if (ts.isPropertyAssignment(p) && p.name.getText(source) === 'type') typeExpr = p.initializer;
            if (ts.isShorthandPropertyAssignment(p) && p.name.text === 'type') typeExpr = p.name;
            if (ts.isPropertyAssignment(p) && p.name.getText(source) === 'nonRetryable') retry = p.initializer.kind === ts.SyntaxKind.TrueKeyword ? 'no' : 'depends';
            if (ts.isShorthandPropertyAssignment(p) && p.name.text === 'nonRetryable') retry = 'depends';
          }
          retry ??= 'yes';
        } else if (how === 'nonRetryable' || how === 'retryable') {
          typeExpr = n.arguments[1];
          retry = how === 'nonRetryable' ? 'no' : 'yes';
        }
        if (typeExpr && retry) {
          for (const type of new Set(stringsOf(typeExpr, source))) {
            const entry = byType.get(type) ?? { retry: new Set<string>(), files: new Set<string>() };
            entry.retry.add(retry);
            entry.files.add(file);
            byType.set(type, entry);
          }
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(source);
  }
  return [...byType.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, e]) => ({ type, retryable: e.retry.size === 1 ? ([...e.retry][0] as 'yes' | 'no' | 'depends') : 'depends', files: [...e.files].sort() }));
}
