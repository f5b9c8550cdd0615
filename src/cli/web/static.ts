/**
 * The page's files: plain HTML, JS and CSS in the package's `web/` folder, served from a
 * fixed table. A request path is looked up, never joined onto a directory, so no path a
 * client sends (`/../lib/…`, `%2e%2e`, an absolute path) can name another file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** `web/` at the package root: the same depth from src/cli/web (tsx, jest) and lib/cli/web (built). */
export const WEB_DIR = join(__dirname, '..', '..', '..', 'web');

/** The page's ES modules, each owning one part of it (web/app.js wires them together). */
export const SCRIPTS = ['app.js', 'dom.js', 'list.js', 'detail.js', 'stream.js', 'graph.js', 'timeline.js', 'bars.js'] as const;

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(SCRIPTS.map((file) => [`/${file}`, { file, type: 'text/javascript; charset=utf-8' }])),
};

export interface StaticFile {
  body: Buffer;
  type: string;
}

/** The file served at `pathname`, or undefined when the table has none. */
export async function staticFile(pathname: string, dir = WEB_DIR): Promise<StaticFile | undefined> {
  const entry = Object.hasOwn(FILES, pathname) ? FILES[pathname] : undefined;
  if (!entry) return undefined;
  return { body: await readFile(join(dir, entry.file)), type: entry.type };
}
