/** Runs the forkflow CLI from source (tests spawn it with `node -r tsx/cjs`). */
import { main } from '../../src/cli/main';

main(process.argv).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
