/**
 * Docs that name what does not exist: every relative link of README.md and docs/ must reach a
 * file or folder of the repository, and its `#anchor` a heading of that page; every inline
 * code span that looks like a repository path (`src/…`, `test/…`, `docs/…`, …) must name a
 * file or folder that is there. Links to the web are not followed (no network in tests).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ignore from 'ignore';
import { at, ROOT, withoutCode, type MarkdownFile } from './markdown';

/** Top folders of the repository whose paths the docs name in code spans. */
const PATH_ROOTS = ['src', 'test', 'docs', 'scripts', 'bench', 'web', 'bin'];

/** A code span that is a path of this repository (maybe with `:line`, a glob or a trailing `/`). */
function repoPathOf(code: string): string | undefined {
  const m = /^([a-z][\w.-]*\/[\w./@*<>-]*?)(?::\d+(?:-\d+)?)?$/.exec(code);
  if (!m) return undefined;
  const path = m[1]!;
  if (!PATH_ROOTS.includes(path.split('/')[0]!)) return undefined;
  return path;
}

/** The repository's ignore rules: a path they reserve (`node_modules/`, `.tools/`) is made by running something. */
function ignoredBy(root: string): (path: string) => boolean {
  const rules = ignore().add(readFileSync(join(root, '.gitignore'), 'utf8'));
  return (path) => rules.ignores(path) || rules.ignores(`${path.replace(/\/$/, "")}/`);
}

/**
 * Whether a repository path exists, or is one the ignore rules reserve for what a run makes; a
 * glob (`*`) or a placeholder (`<n>`) must match at least its folder.
 */
function exists(root: string, path: string, ignored: (path: string) => boolean): boolean {
  const wild = path.search(/[*<]/);
  const plain = wild >= 0 ? path.slice(0, path.lastIndexOf('/', wild) + 1) : path;
  return existsSync(join(root, plain)) || ignored(plain);
}

/**
 * Problems with the links, anchors and named paths of `pages` (default: all `docs`), one line
 * each (`file:line: …`); anchors are looked up in any of `docs`.
 */
export function linkProblems(docs: MarkdownFile[], pages: MarkdownFile[] = docs, root = ROOT): string[] {
  const byFile = new Map(docs.map((d) => [d.file, d]));
  const problems: string[] = [];
  const ignored = ignoredBy(root);
  for (const doc of pages) {
    for (const link of doc.links) {
      const target = link.target;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // http:, mailto:, …
      const [pathPart = '', anchor] = target.split('#', 2) as [string, string | undefined];
      const path = pathPart === '' ? doc.file : normalize(join(dirname(doc.file), decodeURIComponent(pathPart))).split('\\').join('/');
      if (path.startsWith('..')) {
        problems.push(`${at(link)}: link ${target} leaves the repository`);
        continue;
      }
      if (pathPart !== '' && !existsSync(join(root, path))) {
        problems.push(`${at(link)}: link ${target}: ${path} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      if (pathPart !== '' && (statSync(join(root, path)).isDirectory() || !path.endsWith('.md'))) {
        problems.push(`${at(link)}: link ${target}: an anchor on ${path}, which is not a Markdown page`);
        continue;
      }
      const page = pathPart === '' ? doc : byFile.get(path);
      if (!page) {
        problems.push(`${at(link)}: link ${target}: ${path} is not one of the docs (README.md, docs/**/*.md)`);
        continue;
      }
      if (!page.headings.some((h) => h.slug === anchor)) {
        const near = page.headings.map((h) => h.slug).filter((s) => s.includes(anchor.split('-')[0] ?? anchor)).slice(0, 3);
        problems.push(`${at(link)}: link ${target}: ${path} has no heading #${anchor}${near.length ? ` (did you mean #${near.join(', #')}?)` : ''}`);
      }
    }
    for (const span of doc.spans) {
      const path = repoPathOf(span.code);
      if (path !== undefined && !exists(root, path, ignored)) problems.push(`${at(span)}: \`${span.code}\` names ${path}, which does not exist`);
    }
    // Paths named in prose (outside code and link targets): `see src/shared/prefix/cache-break.ts`.
    const fenced = new Set(doc.blocks.flatMap((b) => Array.from({ length: b.body.split('\n').length + 2 }, (_, i) => b.line + i)));
    doc.text.split('\n').forEach((raw, i) => {
      if (fenced.has(i + 1)) return;
      const prose = withoutCode(raw).text.replace(/\]\([^)]*\)/g, ']').replace(/<[^>]*>/g, '');
      for (const m of prose.matchAll(new RegExp(`(?<![\\w/.:@-])((?:${PATH_ROOTS.join('|')})/[\\w./@*-]*[\\w*])`, 'g'))) {
        if (!exists(root, m[1]!, ignored)) problems.push(`${doc.file}:${i + 1}: names ${m[1]!}, which does not exist`);
      }
    });
  }
  return problems;
}
