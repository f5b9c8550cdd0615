/** Runs the forkflow CLI from source (tests spawn it with `node -r tsx/cjs`), as bin/forkflow.js does. */
import { main } from '../../src/cli/main';

main(process.argv).catch((err: unknown) => {
  process.stderr.write(`forkflow: ${err instanceof Error ? err.message : String(err)}\n`);
  if (process.argv.includes('--debug') && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
