import { execFileSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../../bin/built';
import { temporalBinary } from '../lib/temporalCli';
import type { FleetNet } from './hosts';
import { POSTGRES_PORT, PostgresHost } from './postgres';
import { waitForPort } from './waitForPort';

// A production-shaped Temporal on fleet hosts: the server built from its Go module
// (scripts/ensure-temporal-server.sh), PostgreSQL for persistence and visibility with the schemas
// Temporal's own SQL tool sets up, and server nodes on hosts of their own that find each other
// through the membership table in the database. Every node runs every service, as a small
// production cluster does; each node's frontend serves clients on its host's address.

export const FRONTEND_PORT = 7233;
const NAMESPACE = 'default';
/** Fixed when the database is set up; 8 spreads shards over both nodes, so losing one moves some. */
const HISTORY_SHARDS = 8;

/** The cache folder with temporal-server, temporal-sql-tool and schema/, built once. */
function serverBuild(): string {
  const script = path.join(repoRoot, 'scripts/ensure-temporal-server.sh');
  return execFileSync('bash', [script], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' }).trim();
}

function datastore(pg: PostgresHost, database: string, maxConns: number): string {
  return `      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: "${pg.address}:${POSTGRES_PORT}"
        connectProtocol: tcp
        user: ${pg.user}
        password: "${pg.password}"
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
}

/** One node's config: its services bound to its host's address; membership ports differ per node. */
function nodeConfig(pg: PostgresHost, address: string, index: number): string {
  const service = (grpcPort: number, membershipPort: number, extra = '') => `    rpc:
      grpcPort: ${grpcPort}
      membershipPort: ${membershipPort + 100 * index}
      bindOnIP: "${address}"${extra}`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${HISTORY_SHARDS}
  datastores:
    default:
${datastore(pg, 'temporal', 20)}
    visibility:
${datastore(pg, 'temporal_visibility', 5)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "${address}"
services:
  frontend:
${service(FRONTEND_PORT, 6933, '\n      httpPort: 7243')}
  history:
${service(7234, 6934)}
  matching:
${service(7235, 6935)}
  worker:
${service(7239, 6939)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "${address}:${FRONTEND_PORT}"
dcRedirectionPolicy:
  policy: noop
publicClient:
  hostPort: "${address}:${FRONTEND_PORT}"
`;
}

export class TemporalNodes {
  readonly pg: PostgresHost;
  readonly nodes: string[] = [];
  private readonly build = serverBuild();
  private readonly processes = new Map<string, ChildProcess>();
  private readonly addresses = new Map<string, string>();

  constructor(
    private readonly net: FleetNet,
    subnet: string,
  ) {
    this.pg = new PostgresHost(net, subnet);
  }

  /** PostgreSQL, both databases' schemas, `count` nodes, and the namespace workers use. */
  async start(count: number): Promise<void> {
    await this.pg.start();
    this.setupSchemas();
    for (let i = 1; i <= count; i++) await this.addNode(`temporal-${i}`);
    await this.createNamespace();
  }

  frontend(node: string): string {
    return `${this.net.host(node).address}:${FRONTEND_PORT}`;
  }

  /** The node worker host `worker-N` dials: workers alternate between the nodes. */
  nodeFor(worker: string): string {
    return this.nodes[(Number(worker.split('-')[1]) - 1) % this.nodes.length]!;
  }

  /** temporal-sql-tool, as an operator runs it: create each database, set up version 0.0, update to the newest. */
  private setupSchemas(): void {
    const tool = path.join(this.build, 'temporal-sql-tool');
    const base = ['--plugin', 'postgres12', '--ep', this.pg.address, '-p', String(POSTGRES_PORT), '-u', this.pg.user];
    const env = { ...process.env, SQL_PASSWORD: this.pg.password };
    for (const [database, folder] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ] as const) {
      const sql = (...args: string[]) =>
        execFileSync(tool, [...base, '--db', database, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      sql('create-database');
      sql('setup-schema', '-v', '0.0');
      sql('update-schema', '-d', path.join(this.build, 'schema', 'v12', folder, 'versioned'));
    }
  }

  /** A node host (a lost one comes back on its old address, as a replaced machine keeps its DNS name). */
  async addNode(name: string): Promise<void> {
    const short = `t${name.split('-')[1]}`;
    const host = this.net.addHost(name, short, this.addresses.get(name));
    this.addresses.set(name, host.address);
    const index = Number(name.split('-')[1]);
    const config = path.join(host.dir, 'config.yaml');
    writeFileSync(config, nodeConfig(this.pg, host.address, index), { mode: 0o600 });
    const child = this.net.spawn(name, [
      path.join(this.build, 'temporal-server'),
      '--config-file',
      config,
      '--allow-no-auth',
      'start',
    ]);
    this.processes.set(name, child);
    await waitForPort(host.address, FRONTEND_PORT, `Temporal node ${name}`, child, path.join(host.dir, 'host.log'));
    if (!this.nodes.includes(name)) this.nodes.push(name);
  }

  /** Loses a node's host (every process SIGKILLed, namespace gone), waits `downMs`, and brings a fresh one back. */
  async loseNode(name: string, downMs: number): Promise<void> {
    await this.net.loseHost(name);
    this.processes.delete(name);
    await sleep(downMs);
    await this.addNode(name);
    await this.waitForNamespace(name);
  }

  private async createNamespace(): Promise<void> {
    const first = this.nodes[0]!;
    execFileSync(
      temporalBinary(),
      [
        'operator',
        'namespace',
        'create',
        '--namespace',
        NAMESPACE,
        '--retention',
        '72h',
        '--address',
        this.frontend(first),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    for (const node of this.nodes) await this.waitForNamespace(node);
  }

  /** Until the node's frontend serves the namespace (each node refreshes its namespace cache on its own). */
  private async waitForNamespace(node: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        execFileSync(
          temporalBinary(),
          ['workflow', 'list', '--namespace', NAMESPACE, '--limit', '1', '--address', this.frontend(node)],
          { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 },
        );
        return;
      } catch (err) {
        last = String((err as { stderr?: Buffer }).stderr ?? err);
      }
      await sleep(1_000);
    }
    throw new Error(`Temporal node ${node} did not serve namespace ${NAMESPACE} within ${timeoutMs / 1000} s: ${last}`);
  }

  /** PostgreSQL stopped cleanly first, so it leaves no shared memory behind when the fleet's namespaces go. */
  async close(): Promise<void> {
    for (const name of this.nodes) if (this.net.hosts.has(name)) await this.net.loseHost(name);
    await this.pg.stop();
  }
}
