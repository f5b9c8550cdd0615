/**
 * `npm run stack [-- up|down|status]`: the self-hosted Temporal stack (scripts/stack/stack.ts).
 * `up` builds what is missing, starts PostgreSQL, the server and the Web UI, leaves them
 * running, and prints where they are; `down` stops them; `status` says whether they run.
 * Workers run on this host against it, so `up` also installs bubblewrap (every fork's Bash
 * runs in its sandbox) and says whether the sandbox works here.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describeSandbox, probeSandbox } from '../../src/activities/tools/sandbox';
import { forkflowDataConverter, plaintextNotice } from '../../src/payloads/data-converter';
import { DEFAULT_STACK_DIR, readDefaultStack, startStack, stopStack } from './stack';
import { clientTlsEnv } from './tls';

/** Installs bubblewrap when missing (scripts/install-bubblewrap.sh) and describes the sandbox workers here get. */
async function sandboxLine(): Promise<string> {
  if (process.platform === 'linux') spawnSync('bash', [path.join(__dirname, '..', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  return describeSandbox(await probeSandbox());
}

async function main(command: string): Promise<void> {
  if (command === 'down') {
    const stopped = await stopStack();
    process.stdout.write(stopped ? 'stack stopped\n' : 'no stack was running\n');
    return;
  }
  if (command === 'status') {
    const state = readDefaultStack();
    const alive = state && [state.pids.server, state.pids.ui].every(running);
    process.stdout.write(alive ? `running · Temporal ${state.address} · Web UI ${state.uiUrl}\n` : 'not running\n');
    process.exitCode = alive ? 0 : 1;
    return;
  }
  if (command !== 'up') throw new Error(`unknown command '${command}': use up, down or status`);
  const running0 = readDefaultStack();
  if (running0 && [running0.pids.server, running0.pids.ui].every(running)) {
    process.stdout.write(`already running · Temporal ${running0.address} · Web UI ${running0.uiUrl}\n`);
    return;
  }
  // The stack stores what its workers send: say so when this environment's workers would not encrypt.
  const plaintext = plaintextNotice(forkflowDataConverter());
  if (plaintext) process.stderr.write(`${plaintext}\n`);
  const t0 = Date.now();
  const sandbox = await sandboxLine();
  const stack = await startStack({ detached: true, log: (line) => process.stderr.write(`${line}\n`) });
  const took = ((Date.now() - t0) / 1000).toFixed(1);
  process.stdout.write(
    [
      `Temporal stack up in ${took} s (${Object.entries(stack.timings).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(', ')})`,
      `  Temporal frontend  ${stack.address}   (PostgreSQL 127.0.0.1:${readDefaultStack()?.ports.postgres})`,
      `  Web UI             ${stack.uiUrl}`,
      `  data and logs      ${DEFAULT_STACK_DIR}`,
      `  ${sandbox}`,
      `Run the demo on it:  npm start -- --stack`,
      stack.tls
        ? `Frontend requires mutual TLS (FORKFLOW_STACK_MTLS=1; certificates in ${stack.tls.dir}). Point any client or worker at it:\n  ${Object.entries({ TEMPORAL_ADDRESS: stack.address, ...clientTlsEnv(stack.tls) }).map(([k, v]) => `${k}=${v}`).join(' \\\n  ')}`
        : `Point any client or worker at it: TEMPORAL_ADDRESS=${stack.address} (or a TEMPORAL_PROFILE, see the README). Any local user can too: FORKFLOW_STACK_MTLS=1 requires a client certificate (docs/security-model.md)`,
      `Stop it:             npm run stack -- down`,
      '',
    ].join('\n'),
  );
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

main(process.argv[2] ?? 'up').catch((err: Error) => {
  process.stderr.write(`stack: ${err.message}\n`);
  process.exitCode = 1;
});
