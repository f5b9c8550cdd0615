/**
 * No import circle anywhere in src/ (issue 45), type-only imports included: a circle of types
 * costs nothing at run time but still ties its files together, so none of them can be read,
 * moved or split alone. Checked with the TypeScript compiler's parser (test/kit/imports.ts),
 * which sees `import type`, inline `type` specifiers, `export … from`, `import('./x').T` in
 * type positions, `require` and dynamic `import()`.
 *
 * A circle is broken by moving the type or schema that closes it into the module that owns it,
 * never by a re-export (which keeps the circle).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { circles, importsOf, sourceFiles, SRC } from '../../kit/imports';

test('src/ has no import circle, type-only imports included', () => {
  const imports = sourceFiles().flatMap(importsOf);
  expect(imports.filter((i) => i.relative).length).toBeGreaterThan(1000);
  expect(circles(imports, () => true)).toEqual([]);
});

describe('the scanner finds circles of every import form', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'forkflow-circles-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const circlesOf = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const paths = Object.keys(files).map((name) => join(dir, name));
    const found = circles(paths.flatMap(importsOf), () => true);
    for (const name of Object.keys(files)) rmSync(join(dir, name));
    // Paths as the scanner names them (relative to src/), back to the files' own names.
    return found.map((c) => c.map((f) => relative(dir, join(SRC, f))));
  };

  test.each([
    ['import type', "import type { B } from './b';\nexport type A = B;\n"],
    ['inline type specifiers', "import { type B } from './b';\nexport type A = B;\n"],
    ['an import() type', "export type A = import('./b').B;\n"],
    ['a type-only re-export', "export type { B } from './b';\n"],
    ['a value import', "import { b } from './b';\nexport const a = b;\n"],
  ])('%s', (_form, a) => {
    expect(circlesOf({ 'a.ts': a, 'b.ts': "import type { A } from './a';\nexport type B = string | A[];\nexport const b = 1;\n" })).toEqual([['a.ts', 'b.ts']]);
  });

  test('a chain without a way back is no circle', () => {
    expect(circlesOf({ 'a.ts': "import type { B } from './b';\nexport type A = B;\n", 'b.ts': "import type { C } from './c';\nexport type B = C;\n", 'c.ts': 'export type C = string;\n' })).toEqual([]);
  });
});
