import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import path from 'node:path';

// Hosts of a fleet on one Linux machine: each host is a network namespace with one veth pair to a
// bridge this module creates, plus a private mount namespace per process in which the host's own
// directory is bound over /tmp, and $HOME and the build cache point into it. The shared artifacts
// root is one directory outside /tmp, so it sits at the same path on every host, as an NFS or Lustre
// mount would. Only interfaces created here get addresses (one private /24), so no traffic leaves
// the bridge and loopback. Every name starts with the fleet's prefix; `removeLeftovers` deletes by
// that prefix, which is also how a crashed earlier run's namespaces and links are cleared.

export interface FleetNetOptions {
  /** 2-4 lowercase letters; interface names are at most 15 characters, so it stays short. */
  prefix: string;
  /** The third octet of 10.201.<n>.0/24, distinct per prefix so a test run and a manual run coexist. */
  subnet: number;
  /** Host directories (tmp, home, cache, logs) live under it; it must not be under /tmp. */
  baseDir: string;
}

export interface Host {
  name: string;
  netns: string;
  /** The bridge side of the host's veth: setting it down partitions the host. */
  link: string;
  address: string;
  dir: string;
  processes: Set<ChildProcess>;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const tryIp = (...args: string[]) => {
  try {
    return ip(...args);
  } catch {
    return '';
  }
};

/** True when this process may make namespaces: root and the `ip` tool. */
export function namespacesAvailable(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== 'linux') return { ok: false, reason: 'fleet hosts need Linux network namespaces' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'fleet hosts need root (network and mount namespaces)' };
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
    execFileSync('unshare', ['--version'], { stdio: 'ignore' });
  } catch {
    return { ok: false, reason: 'fleet hosts need the `ip` (iproute2) and `unshare` (util-linux) commands' };
  }
  return { ok: true };
}

/** Deletes every namespace (after SIGKILLing what runs in it) and link named with `prefix`. */
export function removeLeftovers(prefix: string): { namespaces: number; links: number } {
  let namespaces = 0;
  let links = 0;
  for (const line of tryIp('netns', 'list').split('\n')) {
    const name = line.split(' ')[0];
    if (!name?.startsWith(`${prefix}-`)) continue;
    signalAllIn(name);
    tryIp('netns', 'del', name);
    namespaces++;
  }
  for (const line of tryIp('-o', 'link', 'show').split('\n')) {
    const name = line.split(':')[1]?.trim().split('@')[0];
    if (!name?.startsWith(`${prefix}-`)) continue;
    tryIp('link', 'del', name);
    links++;
  }
  return { namespaces, links };
}

function signalAllIn(netns: string, signal: NodeJS.Signals = 'SIGKILL'): number {
  const pids = tryIp('netns', 'pids', netns)
    .split('\n')
    .map(Number)
    .filter((p) => p > 0);
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
  return pids.length;
}

export class FleetNet {
  readonly hosts = new Map<string, Host>();
  readonly bridge: string;
  /** The bridge's own address: the driver (this process, in the root namespace) reaches hosts through it. */
  readonly driverAddress: string;
  /**
   * Directories every host sees at a path of the driver's choosing, bound inside the host's mount
   * namespace before its own /tmp hides the driver's (a checkout under /tmp keeps its node_modules
   * there), and gone with the namespace.
   */
  readonly binds: Array<{ from: string; to: string }> = [];
  /** The working directory of host processes; the driver's own may be under the /tmp hosts hide. */
  workDir = '/';
  private nextOctet = 1;
  private readonly logs = new Map<string, WriteStream>();
  private closed = false;

  constructor(private readonly opts: FleetNetOptions) {
    if (!/^[a-z]{2,4}$/.test(opts.prefix)) throw new Error(`fleet prefix ${opts.prefix}: 2-4 lowercase letters`);
    if (opts.baseDir.startsWith('/tmp/') || opts.baseDir === '/tmp')
      throw new Error('the fleet base dir must not be under /tmp (hosts bind their own /tmp)');
    this.bridge = `${opts.prefix}-br`;
    this.driverAddress = `10.201.${opts.subnet}.254`;
    removeLeftovers(opts.prefix);
    // A crashed run's directories go too: a Temporal host must not start on an old run's SQLite file.
    rmSync(opts.baseDir, { recursive: true, force: true });
    mkdirSync(opts.baseDir, { recursive: true });
    ip('link', 'add', this.bridge, 'type', 'bridge');
    ip('link', 'set', this.bridge, 'up');
    ip('addr', 'add', `${this.driverAddress}/24`, 'dev', this.bridge);
  }

  /** A new host: namespace, veth to the bridge, address, loopback, and its own directories. */
  addHost(name: string, short: string, fixedAddress?: string): Host {
    if (this.hosts.has(name)) throw new Error(`host ${name} exists`);
    const netns = `${this.opts.prefix}-${name}`;
    const link = `${this.opts.prefix}-${short}`;
    const inner = `${link}i`;
    if (inner.length > 15) throw new Error(`interface name ${inner} is longer than 15 characters`);
    const address = fixedAddress ?? `10.201.${this.opts.subnet}.${this.nextOctet++}`;
    ip('netns', 'add', netns);
    ip('link', 'add', link, 'type', 'veth', 'peer', 'name', inner);
    ip('link', 'set', inner, 'netns', netns);
    ip('link', 'set', link, 'master', this.bridge, 'up');
    ip('-n', netns, 'link', 'set', inner, 'name', 'eth0');
    ip('-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', netns, 'link', 'set', 'eth0', 'up');
    ip('-n', netns, 'link', 'set', 'lo', 'up');
    const dir = path.join(this.opts.baseDir, 'hosts', name);
    for (const sub of ['tmp', 'home', 'cache']) mkdirSync(path.join(dir, sub), { recursive: true });
    const host: Host = { name, netns, link, address, dir, processes: new Set() };
    this.hosts.set(name, host);
    return host;
  }

  host(name: string): Host {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`no host ${name}`);
    return h;
  }

  /**
   * Runs argv on the host: in its network namespace and a private mount namespace with the host's
   * tmp bound over /tmp, $HOME and the caches in the host's directory. Output goes to the host's log.
   */
  spawn(hostName: string, argv: string[], env: Record<string, string> = {}): ChildProcess {
    const host = this.host(hostName);
    const binds = this.binds.map((b) => `mount --bind '${b.from}' '${b.to}' && `).join('');
    const script = `${binds}mount --bind "$FLEET_HOST_DIR/tmp" /tmp && cd '${this.workDir}' && exec "$@"`;
    const child = spawn(
      'ip',
      ['netns', 'exec', host.netns, 'unshare', '-m', '--propagation', 'private', 'sh', '-c', script, 'sh', ...argv],
      {
        env: {
          ...process.env,
          FLEET_HOST_DIR: host.dir,
          HOME: path.join(host.dir, 'home'),
          XDG_CACHE_HOME: path.join(host.dir, 'cache'),
          PIVOT_MINER_CACHE: path.join(host.dir, 'cache', 'pivot-miner'),
          TMPDIR: '/tmp',
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const log = this.logFor(host);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    host.processes.add(child);
    child.once('exit', () => host.processes.delete(child));
    return child;
  }

  private logFor(host: Host): WriteStream {
    let log = this.logs.get(host.name);
    if (!log) {
      log = createWriteStream(path.join(host.dir, 'host.log'), { flags: 'a' });
      this.logs.set(host.name, log);
    }
    return log;
  }

  /** Cuts the host off the bridge; its processes keep running and keep their sockets. */
  partition(hostName: string): void {
    ip('link', 'set', this.host(hostName).link, 'down');
  }

  heal(hostName: string): void {
    ip('link', 'set', this.host(hostName).link, 'up');
  }

  /** Stops every process of the host (SIGSTOP): it holds its work, leases and files, and says nothing. */
  pause(hostName: string): void {
    signalAllIn(this.host(hostName).netns, 'SIGSTOP');
  }

  /** Continues a paused host's processes, which wake as though no time had passed. */
  resume(hostName: string): void {
    signalAllIn(this.host(hostName).netns, 'SIGCONT');
  }

  /** Loses the host: SIGKILLs every process in its namespace, drops its /tmp, removes it. */
  async loseHost(hostName: string): Promise<number> {
    const host = this.host(hostName);
    const exits = [...host.processes]
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map((c) => new Promise((r) => c.once('exit', r)));
    const killed = signalAllIn(host.netns);
    await Promise.all(exits);
    rmSync(path.join(host.dir, 'tmp'), { recursive: true, force: true });
    tryIp('netns', 'del', host.netns);
    tryIp('link', 'del', host.link);
    this.logs.get(host.name)?.end();
    this.logs.delete(host.name);
    this.hosts.delete(hostName);
    return killed;
  }

  /** Synchronous, so it can run from an exit or signal handler: nothing of this fleet is left. */
  closeSync(): void {
    if (this.closed) return;
    this.closed = true;
    for (const host of this.hosts.values()) signalAllIn(host.netns);
    removeLeftovers(this.opts.prefix);
    for (const log of this.logs.values()) log.end();
  }
}

/**
 * Removes the fleet on exit, Ctrl-C and SIGTERM, so no namespace or link outlives the run even when
 * it fails; returns the function that detaches the handlers after a normal close.
 */
export function closeOnExit(net: FleetNet): () => void {
  const onExit = () => net.closeSync();
  const onSignal = (signal: NodeJS.Signals) => {
    net.closeSync();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}
