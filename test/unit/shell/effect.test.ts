/**
 * The effect test of issue 10: every adversarial command of the corpus runs through the
 * real Bash tool of a read-only fork, and what is asserted is the EFFECT — no file changed
 * in the workspace, a canary folder, $HOME or /tmp; no connection reached a loopback
 * listener; no process left behind — once with each wall alone:
 *   - classifier only: the real classifier, sandbox off;
 *   - sandbox only: the OS sandbox with a classifier that allows everything;
 *   - a writing fork's sandbox (its workspace writable): nothing outside it changes.
 * A control pass with neither wall proves the harness sees each kind of effect.
 *
 * The runner (test/kit/effect-runner.ts) works inside a bubblewrap "jail" of this test's
 * own, so a command that got through could still only touch the scratch world: the host
 * filesystem is read-only there, /tmp is a scratch folder, and the jail has its own PID
 * namespace. In the classifier pass the jail also drops every capability.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseCorpus } from '../../../src/activities/tools/shell/corpus-report';
import type { EffectConfig, EffectReport } from '../../kit/effect-runner';

const REPO = path.resolve(__dirname, '..', '..', '..');
const CORPUS = path.join(REPO, 'test', 'data', 'shell-corpus.jsonl');
const RUNNER = path.join(REPO, 'test', 'kit', 'effect-runner.ts');

let scratch: string;
let adversarial: string[];

beforeAll(() => {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-bubblewrap.sh')], { stdio: 'inherit' });
  expect(install.status).toBe(0);
  mkdirSync(path.join(REPO, '.scratch'), { recursive: true });
  scratch = realpathSync(mkdtempSync(path.join(REPO, '.scratch', 'effect-')));
  // Where the sandbox runs calls as an unprivileged user (a root worker without a pids cgroup, as in the jail), it must be able to enter the workspace.
  chmodSync(scratch, 0o755);
  adversarial = parseCorpus(readFileSync(CORPUS, 'utf8'))
    .filter((c) => c.expect === 'deny')
    .map((c) => c.cmd);
}, 300_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the effect runner in the test's jail and returns its report. */
function runJailed(mode: EffectConfig['mode'], commands: string[]): EffectReport {
  // Commands run straight in the jail unless the sandbox is under test: then the jail keeps
  // the capabilities and the host's /proc that the nested bubblewrap needs (the commands
  // themselves only ever run inside that capability-less sandbox).
  const nested = mode === 'sandbox' || mode === 'sandbox-workspace';
  const dir = path.join(scratch, mode);
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  // A checkout under /tmp (CI may clone anywhere) would be hidden by the jail's own /tmp:
  // it is bound again, read-only, and the runner leaves that part of /tmp out of its watch.
  const underTmp = REPO.startsWith('/tmp/');
  const config: EffectConfig = { mode, scratch: dir, commands, timeoutMs: 3000, ownPidNamespace: !nested, skipTmp: underTmp ? [REPO.split('/')[2]!] : [] };
  const configPath = path.join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify(config));
  const jail = [
    '--die-with-parent',
    ...(nested ? [] : ['--unshare-pid', '--cap-drop', 'ALL']),
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    ...(nested ? ['--bind', '/proc', '/proc'] : ['--proc', '/proc']),
    // The sandbox caps each call's processes with a pids cgroup where it may: as on the host.
    ...(nested ? ['--bind-try', '/sys/fs/cgroup/pids', '/sys/fs/cgroup/pids'] : []),
    '--bind', path.join(dir, 'tmp'), '/tmp',
    ...(underTmp ? ['--ro-bind', REPO, REPO] : []),
    '--bind', dir, dir,
    '--chdir', dir,
    '--',
  ];
  const result = spawnSync('bwrap', [...jail, process.execPath, '-r', 'tsx/cjs', RUNNER, configPath], {
    cwd: REPO,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8', NODE_PATH: path.join(REPO, 'node_modules') },
  });
  if (result.status !== 0) throw new Error(`effect runner failed (${result.status}): ${result.stderr}`);
  const last = result.stdout.trim().split('\n').pop()!;
  return JSON.parse(last) as EffectReport;
}

function summary(report: EffectReport): string {
  return report.effects.map((e) => `  ${JSON.stringify(e.cmd)}: ${e.what.join('; ')}`).join('\n');
}

describe('effects of adversarial commands through the read-only Bash tool', () => {
  it('sees every kind of effect when neither wall is up (controls)', () => {
    // Each control with a word its effect report must contain.
    const controls: [string, string][] = [
      ['touch p', 'created ws/p'],
      ['echo x > ../canary/keep.txt', 'changed canary/keep.txt'],
      ['echo x >> ~/.profile', 'changed home/.profile'],
      ['touch /tmp/ff-effect-control', 'created /tmp/ff-effect-control'],
      ['touch /tmp/anything', 'created /tmp/anything'],
      ['exec 3<>/dev/tcp/127.0.0.1/47123', 'connected'],
      ['git fetch -q origin', 'connected'],
      // The fifo makes the command wait until the escapee has left the process group.
      ["mkfifo /tmp/ff-effect-fifo && (setsid bash -c 'echo > /tmp/ff-effect-fifo; exec sleep 99999' &) && cat /tmp/ff-effect-fifo", 'left 1 process'],
      ['git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x', 'changed ws/.git/'],
      ['GIT_OPTIONAL_LOCKS=1 git status --short', 'changed ws/.git/index'],
    ];
    const report = runJailed('none', controls.map(([cmd]) => cmd));
    expect(report.effects.map((e) => e.cmd)).toEqual(controls.map(([cmd]) => cmd));
    report.effects.forEach((e, i) => expect(e.what.join('; ')).toContain(controls[i]![1]));
  }, 120_000);

  it('has no effect with the classifier alone (sandbox off)', () => {
    expect(adversarial.length).toBeGreaterThan(300);
    const report = runJailed('classifier', adversarial);
    console.log(`classifier only: ${adversarial.length} adversarial commands, ${report.ran} ran, ${report.effects.length} with effects\n${summary(report)}`);
    expect(report.effects).toEqual([]);
  }, 600_000);

  it('has no effect with the sandbox alone (classifier allowing everything)', () => {
    const report = runJailed('sandbox', adversarial);
    console.log(`sandbox only: ${adversarial.length} adversarial commands, ${report.ran} ran (${report.timedOut} until the timeout), ${report.effects.length} with effects\n${summary(report)}`);
    expect(report.ran).toBe(adversarial.length);
    expect(report.effects).toEqual([]);
  }, 900_000);

  // Every fourth command, to keep CI's time: the sandbox is the same one as above with the
  // workspace bound writable, and all 1,242 kept inside it when run once in full.
  it("a writing fork's sandbox keeps adversarial commands inside its workspace (every fourth)", () => {
    const sample = adversarial.filter((_, i) => i % 4 === 0);
    const report = runJailed('sandbox-workspace', sample);
    console.log(`writing fork's sandbox: ${sample.length} adversarial commands, ${report.ran} ran, ${report.effects.length} with effects outside the workspace\n${summary(report)}`);
    expect(report.ran).toBe(sample.length);
    expect(report.effects).toEqual([]);
  }, 1_800_000);
});
