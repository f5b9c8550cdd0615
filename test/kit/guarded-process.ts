/**
 * A process of its own for the call guard's tests (src/activities/call-guard.ts): the guard
 * installs process-wide listeners, which must not meet jest's. Runs one scenario named in
 * argv and prints what happened, one line each; the test reads the lines and the exit code.
 *
 * Usage: node -r tsx/cjs guarded-process.ts <scenario>
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CallMachineryError, guardCall, setCallGuardLog } from '../../src/activities/call-guard';

const say = (line: string) => process.stdout.write(`${line}\n`);
setCallGuardLog({ error: (message, meta) => say(`log: ${message}: ${String(meta?.error)}`) });

/** A call that waits for its signal, after its machinery does `misbehave` outside any awaited path. */
function waitingCall(misbehave: () => void): (signal: AbortSignal) => Promise<string> {
  return (signal) =>
    new Promise<string>((resolve, reject) => {
      setTimeout(misbehave, 5);
      signal.addEventListener('abort', () => reject(new Error('aborted by its signal')), { once: true });
      setTimeout(() => resolve('not stopped'), 10_000).unref();
    });
}

async function settle(p: Promise<string>): Promise<void> {
  try {
    say(`resolved: ${await p}`);
  } catch (err) {
    say(`rejected: ${err instanceof CallMachineryError ? 'CallMachineryError' : 'other'}: ${(err as Error).message}`);
  }
}

const scenarios: Record<string, () => Promise<void>> = {
  async ordinary() {
    await settle(guardCall(new AbortController().signal, () => Promise.resolve('value')));
  },
  async thrown() {
    await settle(guardCall(new AbortController().signal, waitingCall(() => {
      throw new TypeError('thrown from a callback');
    })));
  },
  async rejected() {
    await settle(guardCall(new AbortController().signal, waitingCall(() => void Promise.reject(new RangeError('left rejected')))));
  },
  async 'two calls'() {
    // Only the call whose machinery failed is stopped.
    const quiet = guardCall(new AbortController().signal, () => sleep(200).then(() => 'the other call finished'));
    await settle(guardCall(new AbortController().signal, waitingCall(() => {
      throw new Error('one call fails');
    })));
    await settle(quiet);
  },
  async 'after the call'() {
    await settle(guardCall(new AbortController().signal, () => {
      setTimeout(() => {
        throw new Error('too late');
      }, 50);
      return Promise.resolve('done early');
    }));
    await sleep(100);
  },
  async 'outside any call'() {
    setTimeout(() => {
      throw new Error('not a tool call');
    }, 5);
    await guardCall(new AbortController().signal, () => Promise.resolve('installs the guard'));
    await sleep(1000);
  },
  async 'rejected outside any call'() {
    await guardCall(new AbortController().signal, () => Promise.resolve('installs the guard'));
    void Promise.reject(new Error('nobody awaits this'));
    await sleep(1000);
  },
};

async function main(): Promise<void> {
  const scenario = scenarios[process.argv[2] ?? ''];
  if (!scenario) throw new Error(`unknown scenario; one of: ${Object.keys(scenarios).join(', ')}`);
  await scenario();
  // Still here: the process survived.
  say('alive');
}

void main();
