/** The Read tool's activity: the file's text, from the workspace the bench wrote. */
import { readFile } from 'node:fs/promises';
import { resolve, sep } from 'node:path';

export function createReadActivities(workspace: string) {
  const root = resolve(workspace);
  return {
    async readFile(path: string): Promise<string> {
      const full = resolve(root, path);
      if (!full.startsWith(root + sep)) throw new Error(`Read: ${path} is outside the workspace`);
      return readFile(full, 'utf8');
    },
  };
}
