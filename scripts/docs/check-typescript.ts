/**
 * Every ```ts block of the docs is typechecked as a module of its own, the way a user's code
 * would be: `forkflow`, `forkflow/worker`, `forkflow/workflows`, `forkflow/activities` and
 * `forkflow/testing` resolve through package.json's `exports` to the declarations in lib/
 * (what the published package gives its users, built by `npm run build`), every other import
 * to node_modules, under the repository's own strict compiler options. A block states what it
 * assumes in its own visible code; nothing is prepended to it.
 *
 * The blocks become virtual files inside the repository (so that the package's self-reference
 * resolves), one program checks them all, and each diagnostic is reported at its line of the
 * Markdown file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, type CodeBlock } from './markdown';

/** The languages of blocks this check owns. */
export const TS_LANGS = new Set(['ts', 'typescript']);

/** The repository's compiler options, adjusted only where a user's module differs from ours. */
function compilerOptions(root: string): ts.CompilerOptions {
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), (p) => ts.sys.readFile(p));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return {
    ...options,
    // A user's module: top-level await, and package `exports` honoured (forkflow's entry points).
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    moduleDetection: ts.ModuleDetectionKind.Force,
    types: ['node'],
    noEmit: true,
    declaration: false,
    sourceMap: false,
    composite: false,
    incremental: false,
  };
}

/** The newest modification time under a folder (0 when it is missing). */
function newest(dir: string): number {
  if (!existsSync(dir)) return 0;
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    latest = Math.max(latest, st.isDirectory() ? newest(path) : st.mtimeMs);
  }
  return latest;
}

/**
 * Why lib/ cannot stand for src/ now, or undefined: the blocks are checked against lib/'s
 * declarations, so a stale build would check them against yesterday's API.
 */
export function staleBuild(root = ROOT): string | undefined {
  const built = newest(join(root, 'lib'));
  if (built === 0) return 'lib/ is not built: run `npm run build` (or `node scripts/bootstrap.mjs`)';
  if (built < newest(join(root, 'src'))) return 'lib/ is older than src/: run `npm run build` (or `node scripts/bootstrap.mjs`)';
  return undefined;
}

/** The virtual file a block is checked as: inside the repository, named after where it is. */
const virtualPath = (root: string, block: CodeBlock) => join(root, '.docs-examples', `${block.file.replace(/[/.]/g, '_')}_${block.line}.ts`);

/** Type errors of the TypeScript blocks, one line each (`file:line: TSnnnn message`). */
export function typescriptProblems(blocks: CodeBlock[], root = ROOT): string[] {
  const ours = blocks.filter((b) => TS_LANGS.has(b.lang));
  if (ours.length === 0) return [];
  const files = new Map(ours.map((b) => [virtualPath(root, b), b]));
  const options = compilerOptions(root);
  const host = ts.createCompilerHost(options, true);
  const disk = { fileExists: host.fileExists.bind(host), readFile: host.readFile.bind(host), getSourceFile: host.getSourceFile.bind(host) };
  host.fileExists = (name) => files.has(name) || disk.fileExists(name);
  host.readFile = (name) => files.get(name)?.body ?? disk.readFile(name);
  host.getSourceFile = (name, version, onError, create) => {
    const block = files.get(name);
    return block ? ts.createSourceFile(name, block.body, version, true, ts.ScriptKind.TS) : disk.getSourceFile(name, version, onError, create);
  };
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  const problems: string[] = [];
  for (const [name, block] of files) {
    const source = program.getSourceFile(name)!;
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1;
      problems.push(`${block.file}:${block.line + line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    }
  }
  return problems;
}
