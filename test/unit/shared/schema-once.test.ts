/**
 * Module-level schemas are built once per workflow context (src/shared/base/schema-once.ts). A
 * key names the schema it caches, so two call sites sharing a key would silently hand one of
 * them the other's schema: every call site's key must be its own file and constant. And a
 * schema built at module level without it, in code the workflow bundle holds, is built again
 * for every workflow a worker instantiates.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { z } from 'zod';
import { schemaOnce } from '../../../src/shared/base/schema-once';

const SRC = join(__dirname, '../../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

test('a key is built once; later calls return that instance without building', () => {
  let builds = 0;
  const build = () => {
    builds++;
    return z.object({ a: z.string() });
  };
  const first = schemaOnce('test/schema-once#first', build);
  const again = schemaOnce('test/schema-once#first', build);
  expect(again).toBe(first);
  expect(builds).toBe(1);
  expect(again.parse({ a: 'x' })).toEqual({ a: 'x' });
  expect(schemaOnce('test/schema-once#other', build)).not.toBe(first);
  expect(builds).toBe(2);
});

test('every call site in src/ keys its schema by its own file and constant, and no key repeats', () => {
  const seen = new Map<string, string>();
  const wrong: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const where = relative(SRC, file).replace(/\.ts$/, '');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/schemaOnce\('([^']*)'/g)) {
        const key = m[1]!;
        const constant = /\bconst (\w+)\s*(?::[^=]+)?=\s*schemaOnce\(/.exec(line)?.[1];
        const expected = `${where.replace(/^shared\//, '')}#${constant ?? '?'}`;
        if (key !== expected) wrong.push(`${where}:${i + 1}: '${key}' should be '${expected}'`);
        if (seen.has(key)) wrong.push(`${where}:${i + 1}: '${key}' is also used at ${seen.get(key)}`);
        seen.set(key, `${where}:${i + 1}`);
      }
    });
  }
  expect(wrong).toEqual([]);
  // The module-level schemas of src/shared and src/workflows are all behind it (88 when this was written).
  expect(seen.size).toBeGreaterThan(80);
});

test('no module-level constant of workflow-side code builds a zod schema outside schemaOnce', () => {
  const bare: string[] = [];
  for (const file of [...sourceFiles(join(SRC, 'shared')), ...sourceFiles(join(SRC, 'workflows'))]) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const d of statement.declarationList.declarations) {
        const init = d.initializer;
        if (!init || ts.isArrowFunction(init) || ts.isFunctionExpression(init)) continue;
        const text = init.getText(source);
        // `z.` or a schema's method (`fooSchema.nullish()`) anywhere in it, unless the whole of it is one schemaOnce call.
        const builds = /(^|[^.\w])z\.\w/.test(text) || /\w+Schema\.\w+\(/.test(text);
        if (builds && !/^schemaOnce\(/.test(text)) bare.push(`${relative(SRC, file)}: ${d.name.getText(source)}`);
      }
    }
  }
  expect(bare).toEqual([]);
});
