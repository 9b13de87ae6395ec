import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { stopProcess } from '../../scripts/lib/workerProcess';
import { METRICS_ADDRESS_ENV } from '../../workers/metrics';
import { LOG_LEVEL_ENV } from '../../workers/runtime';
import { startTestTemporal } from '../helpers/temporal';

// Shared setup of the metrics exporter tests (metricsRun.test.ts, metricsExporter.test.ts). The
// exporter lives in the process-global Temporal Runtime, so each case is its own worker process
// (`pivot-miner worker`), the way an operator starts one; the test reads its sockets and scrapes it.

export const repoRoot = path.resolve(__dirname, '../..');

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** A test file's dev server and the worker processes it starts, with their base directory. */
export interface MetricsWorkers {
  /** The dev server, up once the file's `before` ran. */
  env: () => TestWorkflowEnvironment;
  /** Starts `pivot-miner worker` polling `taskQueue`; it is stopped after the file's tests. */
  start: (taskQueue: string, args: string[], extraEnv?: Record<string, string>) => WorkerProcess;
}

/**
 * Before the calling file's tests: a base directory (`prepare` writes what the workers read into it)
 * and a dev server; after them: the workers stopped, the server down and the directory removed.
 */
export function metricsWorkersForFile(prepare: (baseDir: string) => void = () => undefined): MetricsWorkers {
  let env: TestWorkflowEnvironment | undefined;
  let baseDir = '';
  const workers = new Set<ChildProcess>();
  before(async () => {
    baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-metrics-'));
    prepare(baseDir);
    env = await startTestTemporal();
  });
  after(async () => {
    await Promise.all([...workers].map((w) => stopProcess(w)));
    await env?.teardown();
    rmSync(baseDir, { recursive: true, force: true });
  });
  const start = (taskQueue: string, args: string[], extraEnv: Record<string, string> = {}): WorkerProcess => {
    // SDK logs at INFO: the test waits for the worker's "state: 'RUNNING'" line.
    const childEnv: NodeJS.ProcessEnv = workerProcessEnv({
      ...process.env,
      [LOG_LEVEL_ENV]: 'INFO',
      TEMPORAL_ADDRESS: env!.address,
      PIVOT_MINER_TASK_QUEUE: taskQueue,
      PIVOT_MINER_BASE_DIR: baseDir,
      PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
      ...extraEnv,
    });
    if (!(METRICS_ADDRESS_ENV in extraEnv)) delete childEnv[METRICS_ADDRESS_ENV];
    // With the heap flags and environment, as our launchers start a worker: one process, whose sockets the test reads.
    const child = spawn(
      process.execPath,
      [...workerHeapArgs(childEnv), path.join(repoRoot, 'bin/pivot-miner.js'), 'worker', ...args],
      { cwd: repoRoot, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    workers.add(child);
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => (workers.delete(child), resolve(code))),
    );
    return { child, output: () => output, exited };
  };
  return { env: () => env!, start };
}

/** Ports the process itself holds a listening TCP socket on (its fds matched against /proc/net/tcp{,6}). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket?.[1]) inodes.add(socket[1]);
    } catch {
      // fds come and go while we read
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [local, state, inode] = [cols[1], cols[3], cols[9]];
      if (state === '0A' && local && inode && inodes.has(inode)) ports.add(parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format: every line is a comment or `name{labels} value`. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a Prometheus sample line: ${line}`);
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

export async function scrape(address: string): Promise<{ contentType: string | null; samples: Sample[] }> {
  const res = await fetch(`http://${address}/metrics`);
  assert.equal(res.status, 200);
  return { contentType: res.headers.get('content-type'), samples: parseExposition(await res.text()) };
}

/** Scrapes until the worker's pollers show up (the worker is started and polling its queue). */
export async function scrapeWhenPolling(address: string, taskQueue: string, worker: WorkerProcess): Promise<Sample[]> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (worker.child.exitCode !== null) assert.fail(`worker exited: ${worker.output()}`);
    const samples = await scrape(address).then(
      (s) => s.samples,
      () => [],
    );
    if (samples.some((s) => s.name === 'temporal_num_pollers' && s.labels.task_queue === taskQueue && s.value > 0))
      return samples;
    if (Date.now() > deadline)
      assert.fail(`no temporal_num_pollers for ${taskQueue} on ${address}; worker output:\n${worker.output()}`);
    await sleep(500);
  }
}

export const sum = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
