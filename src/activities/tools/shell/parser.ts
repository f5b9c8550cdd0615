/**
 * Loads tree-sitter-bash (through web-tree-sitter's WebAssembly build) once per process.
 * Loading compiles two wasm modules, so it is lazy and memoised: the first classifier
 * call pays for it, every later call reuses the same parser. Parsing itself is
 * synchronous, so one shared Parser instance is safe on Node's single thread.
 */
import { readFile } from 'node:fs/promises';
import { Language, Parser, type Tree } from 'web-tree-sitter';

let loading: Promise<Parser> | undefined;

async function load(): Promise<Parser> {
  await Parser.init();
  // Pass the bytes, not a path: given a path, web-tree-sitter reads it through a dynamic
  // import(), which Jest's CommonJS sandbox rejects.
  const wasm = await readFile(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
  const language = await Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

/** The shared bash parser; a failed load is not cached, so a later call retries. */
export function bashParser(): Promise<Parser> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/**
 * Parse `source` as bash. The caller owns the returned tree and must `delete()` it
 * (it lives in wasm memory, not on the JS heap).
 */
export async function parseBash(source: string): Promise<Tree> {
  const parser = await bashParser();
  const tree = parser.parse(source);
  if (!tree) throw new Error('tree-sitter returned no tree');
  return tree;
}
