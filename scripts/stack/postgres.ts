/**
 * The stack's PostgreSQL: Debian's server binaries (scripts/install-postgres.sh), one data
 * directory under the stack's folder, listening on 127.0.0.1 only with trust auth for the
 * `temporal` role (loopback, a development stack; the README says what production changes).
 *
 * PostgreSQL refuses to run as root. Run as root (as here and in CI), every server command
 * runs as the `postgres` system user through `runuser`, and the data directory is that
 * user's; as anyone else, commands run as the caller.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DB_USER } from './config';

export interface PostgresOptions {
  /** Folder of Debian's server binaries (initdb, pg_ctl). */
  bin: string;
  /** The stack's folder; data, socket and log live below it. */
  dir: string;
  port: number;
}

const SYSTEM_USER = 'postgres';

export class Postgres {
  readonly dataDir: string;
  readonly socketDir: string;
  readonly logFile: string;
  private readonly asRoot = process.getuid?.() === 0;

  constructor(private readonly o: PostgresOptions) {
    this.dataDir = join(o.dir, 'postgres', 'data');
    this.socketDir = join(o.dir, 'postgres', 'run');
    this.logFile = join(o.dir, 'postgres', 'postgres.log');
  }

  /** Creates the cluster on first use; a no-op when the data directory already holds one. */
  init(): void {
    const base = join(this.o.dir, 'postgres');
    mkdirSync(this.socketDir, { recursive: true });
    if (this.asRoot) {
      const { uid, gid } = systemUser();
      for (const path of [base, this.socketDir]) chownSync(path, uid, gid);
      mustTraverse(this.o.dir);
    }
    if (existsSync(join(this.dataDir, 'PG_VERSION'))) return;
    this.run('initdb', ['-D', this.dataDir, '-U', DB_USER, '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  }

  start(): void {
    const options = `-p ${this.o.port} -k ${this.socketDir} -c listen_addresses=127.0.0.1 -c max_connections=200`;
    this.run('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-w', '-t', '60', '-o', options, 'start']);
  }

  /** Fast shutdown: open sessions are ended, the data is consistent. */
  stop(): void {
    if (!this.running()) return;
    this.run('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  running(): boolean {
    return this.exec('pg_ctl', ['-D', this.dataDir, 'status']).status === 0;
  }

  private run(tool: string, args: string[]): void {
    const result = this.exec(tool, args);
    if (result.status !== 0) throw new Error(`${tool} ${args.join(' ')} failed (${result.status ?? result.signal}): ${`${result.stdout}${result.stderr}`.trim().slice(-2000)}`);
  }

  private exec(tool: string, args: string[]) {
    const path = join(this.o.bin, tool);
    const [command, argv] = this.asRoot ? ['runuser', ['-u', SYSTEM_USER, '--', path, ...args]] : [path, args];
    return spawnSync(command, argv, { encoding: 'utf8', cwd: '/' });
  }
}

function systemUser(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, SYSTEM_USER], { encoding: 'utf8' });
  const [uid, gid] = [id('-u'), id('-g')];
  if (uid.status !== 0 || gid.status !== 0) throw new Error(`running as root needs the '${SYSTEM_USER}' system user (Debian's postgresql package creates it)`);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** The `postgres` user must reach the data directory: every parent needs the x bit for others. */
function mustTraverse(dir: string): void {
  for (let path = dir; path !== '/'; path = join(path, '..')) {
    if ((statSync(path).mode & 0o001) === 0) throw new Error(`the '${SYSTEM_USER}' user cannot reach ${dir}: ${path} is not searchable by others (chmod o+x ${path})`);
  }
}
