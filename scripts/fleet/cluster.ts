import { execFileSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, symlinkSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { temporalBinary } from '../lib/temporalCli';
import { closeOnExit, FleetNet, type FleetNetOptions } from './hosts';
import { ENGINE_PORT, GYM_PORTS } from './serve';
import { TemporalNodes } from './temporalNodes';
import { waitForPort } from './waitForPort';

// A fleet on the hosts of hosts.ts: `temporal` (the dev server on its SQLite file) or, with
// `temporal: 'cluster'`, `pg` and `temporal-1`/`temporal-2` (temporalNodes.ts), `engine-N`
// (policy replicas), `gym` (agent, resources, head, the model server over the replicas) and
// `worker-N` (`pivot-miner worker`, each with its own /tmp, $HOME and caches, all on one shared
// artifacts root). The driver, this process, reaches every host through the bridge's address.

const repoRoot = path.resolve(__dirname, '../..');
const TEMPORAL_PORT = 7233;
/** What a worker host runs: the sources the build reads, the configs, and the package manifests. */
const DEPLOYED = [
  'activities',
  'bin',
  'client',
  'configs',
  'contracts',
  'gym',
  'schemas',
  'scripts',
  'servers',
  'workers',
  'workflows',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

/**
 * The checkout as it is now, copied and built once for every host of the fleet, as a release is
 * deployed to real hosts: workers refuse a build older than their sources, and in a work tree that
 * others edit during a long run, workers started later (a fresh host after a lost one) would find the
 * tree's build stale. node_modules is linked, not copied.
 */
function deployCheckout(baseDir: string): string {
  const dir = path.join(baseDir, 'release');
  mkdirSync(dir, { recursive: true });
  for (const entry of DEPLOYED) cpSync(path.join(repoRoot, entry), path.join(dir, entry), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, ['--import', 'tsx', path.join(dir, 'scripts/build.ts')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Hosts get node_modules bound over an empty directory instead (FleetNet.binds): a checkout under
  // /tmp is hidden inside hosts, and a symlink into it would dangle there.
  unlinkSync(path.join(dir, 'node_modules'));
  mkdirSync(path.join(dir, 'node_modules'));
  return dir;
}

export interface ClusterOptions extends FleetNetOptions {
  engines: number;
  engineLatencyMs: number;
  engineSlots: number;
  seed: number;
  taskQueue: string;
  /** `dev`: the CLI's dev server on one host; `cluster`: server nodes on PostgreSQL (temporalNodes.ts). */
  temporal: 'dev' | 'cluster';
}

const TEMPORAL_NODES = 2;

export class Cluster {
  readonly net: FleetNet;
  /** The shared artifacts root's parent: configs and inputs live here, runs under artifacts/. */
  readonly sharedDir: string;
  private temporalProcess?: ChildProcess;
  private temporalNodes?: TemporalNodes;
  private workerCount = 0;
  readonly workers: string[] = [];
  readonly engines: string[] = [];
  private detach: () => void;

  /**
   * PIVOT_MINER_ARTIFACTS_ROOT of workers started from now on: one per run, so every run can have
   * the same run id and its files the same bytes (run_summary.json names the run id).
   */
  artifactsRoot: string;
  /** The release every host runs (deployCheckout). */
  readonly release: string;

  private constructor(readonly opts: ClusterOptions) {
    this.net = new FleetNet(opts);
    this.detach = closeOnExit(this.net);
    this.sharedDir = path.join(opts.baseDir, 'shared');
    this.artifactsRoot = path.join(this.sharedDir, 'artifacts');
    mkdirSync(this.artifactsRoot, { recursive: true });
    this.release = deployCheckout(opts.baseDir);
    this.net.binds.push({ from: path.join(repoRoot, 'node_modules'), to: path.join(this.release, 'node_modules') });
    this.net.workDir = this.release;
  }

  static async start(opts: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(opts);
    try {
      if (opts.temporal === 'cluster') {
        cluster.temporalNodes = new TemporalNodes(cluster.net, `10.201.${opts.subnet}.0/24`);
        await cluster.temporalNodes.start(TEMPORAL_NODES);
      } else {
        cluster.net.addHost('temporal', 'tmp');
        await cluster.startTemporal();
      }
      for (let i = 1; i <= opts.engines; i++) await cluster.addEngine(`engine-${i}`, `e${i}`);
      cluster.net.addHost('gym', 'gym');
      const gym = cluster.net.spawn('gym', [
        process.execPath,
        '--import',
        'tsx',
        path.join(cluster.release, 'scripts/fleet/serve.ts'),
        'gym',
        '--address',
        cluster.gymAddress,
        '--engines',
        cluster.engineUrls.join(','),
      ]);
      await waitForPort(cluster.gymAddress, GYM_PORTS.head, 'the gym host', gym);
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  /** The driver's frontend: the dev server, or the first node of a cluster. */
  get temporalAddress(): string {
    if (this.temporalNodes) return this.temporalNodes.frontend(this.temporalNodes.nodes[0]!);
    return `${this.net.host('temporal').address}:${TEMPORAL_PORT}`;
  }

  /** The production-shaped Temporal's nodes and database (`temporal: 'cluster'` only). */
  get temporalCluster(): TemporalNodes {
    if (!this.temporalNodes) throw new Error('this fleet runs the dev server, not a Temporal cluster');
    return this.temporalNodes;
  }

  get gymAddress(): string {
    return this.net.host('gym').address;
  }

  get engineUrls(): string[] {
    return this.engines.map((e) => `http://${this.net.host(e).address}:${ENGINE_PORT}`);
  }

  get agentUrl(): string {
    return `http://${this.gymAddress}:${GYM_PORTS.agent}`;
  }

  get headUrl(): string {
    return `http://${this.gymAddress}:${GYM_PORTS.head}`;
  }

  /** The model server local profiling calls: the gym host's, over every replica. */
  get modelUrl(): string {
    return `http://${this.gymAddress}:${GYM_PORTS.model}`;
  }

  private readonly engineAddresses = new Map<string, string>();
  private readonly lostEngines: string[] = [];

  /** An engine host; a replaced one comes back on its old address, which the gym's replica list names. */
  private async addEngine(name: string, short: string): Promise<void> {
    const host = this.net.addHost(name, short, this.engineAddresses.get(name));
    this.engineAddresses.set(name, host.address);
    const child = this.net.spawn(name, [
      process.execPath,
      '--import',
      'tsx',
      path.join(this.release, 'scripts/fleet/serve.ts'),
      'engine',
      '--port',
      String(ENGINE_PORT),
      '--latency-ms',
      String(this.opts.engineLatencyMs),
      '--slots',
      String(this.opts.engineSlots),
      '--seed',
      String(this.opts.seed),
    ]);
    await waitForPort(host.address, ENGINE_PORT, `engine ${name}`, child, path.join(host.dir, 'host.log'));
    this.engines.push(name);
  }

  /**
   * The dev server listens on 0.0.0.0 inside its namespace: its own services dial 127.0.0.1, and
   * workers reach it on the host's bridge address (with `--ip <bridge address>` alone it times out).
   * The SQLite file is on the host's disk, not its /tmp, so a restart keeps every workflow.
   */
  private async startTemporal(): Promise<void> {
    const host = this.net.host('temporal');
    const child = this.net.spawn('temporal', [
      temporalBinary(),
      'server',
      'start-dev',
      '--ip',
      '0.0.0.0',
      '--port',
      String(TEMPORAL_PORT),
      '--headless',
      '--db-filename',
      path.join(host.dir, 'temporal.sqlite'),
      '--log-level',
      'error',
    ]);
    this.temporalProcess = child;
    await waitForPort(host.address, TEMPORAL_PORT, 'the Temporal dev server', child);
  }

  /** Stops the Temporal host's server (SIGTERM, SIGKILL after 10 s) and starts it again on its file. */
  async restartTemporal(downMs = 2_000): Promise<void> {
    if (this.temporalNodes) throw new Error('restart_temporal is a dev-server fault; a cluster loses nodes instead');
    const child = this.temporalProcess;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await sleep(downMs);
    await this.startTemporal();
  }

  /** A fresh worker host (new namespace, empty /tmp, $HOME and caches) running `pivot-miner worker`. */
  addWorker(): string {
    const n = ++this.workerCount;
    const name = `worker-${n}`;
    this.net.addHost(name, `w${n}`);
    const nodes = this.temporalNodes;
    const env = workerProcessEnv({
      ...process.env,
      TEMPORAL_ADDRESS: nodes ? nodes.frontend(nodes.nodeFor(name)) : this.temporalAddress,
      PIVOT_MINER_TASK_QUEUE: this.opts.taskQueue,
      PIVOT_MINER_ARTIFACTS_ROOT: this.artifactsRoot,
      PIVOT_MINER_BASE_DIR: this.sharedDir,
      PIVOT_MINER_WORKER_IDENTITY: name,
    });
    const vars = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
    this.net.spawn(
      name,
      [process.execPath, ...workerHeapArgs(env), path.join(this.release, 'bin/pivot-miner.js'), 'worker'],
      vars,
    );
    this.workers.push(name);
    return name;
  }

  /** Loses a worker host entirely (every process SIGKILLed, its /tmp dropped, its namespace gone). */
  async loseWorker(name: string): Promise<void> {
    await this.net.loseHost(name);
    this.workers.splice(this.workers.indexOf(name), 1);
  }

  /** Loses an engine replica's host: its calls move to the other replicas. */
  async loseEngine(name: string): Promise<void> {
    await this.net.loseHost(name);
    this.engines.splice(this.engines.indexOf(name), 1);
    this.lostEngines.push(name);
  }

  /** Brings lost engine hosts back (fresh), so the next run starts with every replica. */
  async restoreEngines(): Promise<void> {
    for (const name of this.lostEngines.splice(0)) await this.addEngine(name, `e${name.split('-')[1]}`);
    this.engines.sort();
  }

  /** Stops every worker host (between runs: a run's workers never serve the next run). */
  async stopWorkers(): Promise<void> {
    for (const name of [...this.workers]) await this.loseWorker(name);
  }

  async close(): Promise<void> {
    await this.temporalNodes?.close().catch(() => undefined);
    this.net.closeSync();
    this.detach();
  }
}
