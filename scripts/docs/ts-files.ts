/** Every .ts file under a folder, in a stable order (the generated reference must not depend on the file system's). */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith('.ts') ? [path] : [];
    });
}
