import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FleetNet } from './hosts';
import { waitForPort } from './waitForPort';

// The fleet's PostgreSQL host: Debian's server in a throwaway data directory under the host's own
// folder (not its /tmp, so a restart keeps every row), run as the `postgres` user on the host's
// address with its socket in a directory of its own, and a password the Temporal nodes present.

export const POSTGRES_PORT = 5432;
const HOST = 'pg';

/** The newest PostgreSQL server Debian's packages installed (`/usr/lib/postgresql/<major>/bin`). */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((d) => existsSync(path.join(root, d, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!majors[0]) throw new Error(`no PostgreSQL server under ${root}; install it: apt-get install -y postgresql`);
  return path.join(root, majors[0], 'bin');
}

/** Runs as the postgres user: initdb and the server refuse root. setpriv execs, so signals reach the server itself. */
const asPostgres = (argv: string[]) => ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', ...argv];

export class PostgresHost {
  readonly user = 'temporal';
  /** Made per fleet, never logged; it goes only into the nodes' config files and the schema tool's argv. */
  readonly password = randomBytes(18).toString('base64url');
  private readonly bin = postgresBinDir();
  private readonly dataDir: string;
  private readonly socketDir: string;
  private child?: ChildProcess;

  constructor(
    private readonly net: FleetNet,
    private readonly subnet: string,
  ) {
    const host = net.addHost(HOST, HOST);
    this.dataDir = path.join(host.dir, 'data');
    this.socketDir = path.join(host.dir, 'socket');
  }

  get address(): string {
    return this.net.host(HOST).address;
  }

  /** initdb (once) with the password and a rule admitting the fleet's /24, then the server. */
  async start(): Promise<void> {
    if (!existsSync(path.join(this.dataDir, 'PG_VERSION'))) this.initdb();
    await this.run();
  }

  private initdb(): void {
    for (const dir of [this.dataDir, this.socketDir]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chownSync(dir, uid('postgres'), gid('postgres'));
    }
    const pwfile = path.join(this.socketDir, 'pwfile');
    writeFileSync(pwfile, `${this.password}\n`, { mode: 0o600 });
    chownSync(pwfile, uid('postgres'), gid('postgres'));
    const [cmd, ...args] = asPostgres([
      path.join(this.bin, 'initdb'),
      '-D',
      this.dataDir,
      '-U',
      this.user,
      `--pwfile=${pwfile}`,
      '--auth-local=peer',
      '--auth-host=scram-sha-256',
      '--encoding=UTF8',
      '--no-instructions',
    ]);
    execFileSync(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: '/' });
    appendFileSync(path.join(this.dataDir, 'pg_hba.conf'), `host all ${this.user} ${this.subnet} scram-sha-256\n`);
  }

  private async run(): Promise<void> {
    this.child = this.net.spawn(
      HOST,
      asPostgres([
        path.join(this.bin, 'postgres'),
        '-D',
        this.dataDir,
        '-c',
        `listen_addresses=${this.address}`,
        '-c',
        `port=${POSTGRES_PORT}`,
        '-c',
        `unix_socket_directories=${this.socketDir}`,
        '-c',
        'max_connections=200',
      ]),
    );
    await waitForPort(
      this.address,
      POSTGRES_PORT,
      'PostgreSQL',
      this.child,
      path.join(this.net.host(HOST).dir, 'host.log'),
    );
  }

  /** Fast shutdown (SIGINT: open transactions roll back, clients are cut), bounded, then SIGKILL. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }

  /** Stops the server, waits `downMs`, and starts it again on the same data directory. */
  async restart(downMs: number): Promise<void> {
    await this.stop();
    await sleep(downMs);
    await this.run();
  }
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}
