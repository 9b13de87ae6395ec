import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { freePort } from '../../scripts/lib/net';
import { stopProcess } from '../../scripts/lib/workerProcess';
import { METRICS_ADDRESS_ENV, metricsBindAddress } from '../../workers/metrics';
import { LOG_LEVEL_ENV } from '../../workers/runtime';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

describe('metricsBindAddress', () => {
  test('off unless a flag or the variable asks for it', () => {
    assert.equal(metricsBindAddress({}, {}), undefined);
    assert.equal(metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '  ' }), undefined);
  });

  test('--metrics-port binds loopback unless --metrics-host says otherwise; flags win over the variable', () => {
    const env = { [METRICS_ADDRESS_ENV]: '0.0.0.0:9000' };
    assert.equal(metricsBindAddress({ metricsPort: '9464' }, env), '127.0.0.1:9464');
    assert.equal(metricsBindAddress({ metricsPort: '9464', metricsHost: '0.0.0.0' }, env), '0.0.0.0:9464');
    assert.equal(metricsBindAddress({ metricsPort: 9464, metricsHost: '::1' }, {}), '[::1]:9464');
    assert.equal(metricsBindAddress({}, env), '0.0.0.0:9000');
    assert.equal(metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '[::]:9464' }), '[::]:9464');
  });

  test('refuses what the exporter cannot bind, naming the setting', () => {
    assert.throws(() => metricsBindAddress({ metricsPort: 'http' }, {}), /--metrics-port: http is not a port/);
    assert.throws(() => metricsBindAddress({ metricsPort: '70000' }, {}), /--metrics-port/);
    assert.throws(
      () => metricsBindAddress({ metricsPort: '9464', metricsHost: 'localhost' }, {}),
      /--metrics-host: localhost is not an IP address/,
    );
    assert.throws(() => metricsBindAddress({ metricsHost: '0.0.0.0' }, {}), /--metrics-host needs --metrics-port/);
    assert.throws(
      () => metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: '9464' }),
      new RegExp(`${METRICS_ADDRESS_ENV}: 9464: expected ip:port`),
    );
    assert.throws(() => metricsBindAddress({}, { [METRICS_ADDRESS_ENV]: 'localhost:9464' }), /not an IP address/);
  });
});

// The exporter lives in the process-global Temporal Runtime, so each case is its own worker
// process (`pivot-miner worker`), the way an operator starts one.

const repoRoot = path.resolve(__dirname, '../..');
let env: TestWorkflowEnvironment;
let baseDir: string;
const workers = new Set<ChildProcess>();

// The demo pipeline with faults in front of the embedded servers, so the failure counters have
// something to count and some requests stay in flight long enough for a scrape to see them: each
// task's rollout 0 gets one 503 and rollout 1 one slow answer from the agent; the model answers
// some local-profile requests with a 429 or slowly, once each.
const COLLECT_CHUNK_SIZE = 16;
const LOCAL_PROFILE_CHUNK_SIZE = 32;

function writeFaultyDemoConfig(): void {
  const config = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8'));
  config.collect = { ...config.collect, input_jsonl: 'demo_tasks.jsonl', chunk_size: COLLECT_CHUNK_SIZE };
  config.local_profile = { ...config.local_profile, chunk_size: LOCAL_PROFILE_CHUNK_SIZE };
  config.servers.faults = {
    agent: {
      slow_ms: 1500,
      rules: [
        { match: { _ng_rollout_index: 0 }, kind: 'http_5xx', times: 1 },
        { match: { _ng_rollout_index: 1 }, kind: 'slow', times: 1 },
      ],
    },
    model: { rate: 0.3, kinds: ['http_429', 'slow'], slow_ms: 1500, retry_after_s: 0 },
  };
  writeFileSync(path.join(baseDir, 'metrics.yaml'), YAML.stringify(config));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'demo_tasks.jsonl'));
}

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-metrics-'));
  writeFaultyDemoConfig();
  env = await startTestTemporal();
});

after(async () => {
  await Promise.all([...workers].map((w) => stopProcess(w)));
  await env?.teardown();
  rmSync(baseDir, { recursive: true, force: true });
});

interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startWorker(taskQueue: string, args: string[], extraEnv: Record<string, string> = {}): WorkerProcess {
  // SDK logs at INFO: the test waits for the worker's "state: 'RUNNING'" line.
  const childEnv: NodeJS.ProcessEnv = workerProcessEnv({
    ...process.env,
    [LOG_LEVEL_ENV]: 'INFO',
    TEMPORAL_ADDRESS: env.address,
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
}

/** Ports the process itself holds a listening TCP socket on (its fds matched against /proc/net/tcp{,6}). */
function listeningPorts(pid: number): number[] {
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

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format: every line is a comment or `name{labels} value`. */
function parseExposition(text: string): Sample[] {
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

async function scrape(address: string): Promise<{ contentType: string | null; samples: Sample[] }> {
  const res = await fetch(`http://${address}/metrics`);
  assert.equal(res.status, 200);
  return { contentType: res.headers.get('content-type'), samples: parseExposition(await res.text()) };
}

/** Scrapes until the worker's pollers show up (the worker is started and polling its queue). */
async function scrapeWhenPolling(address: string, taskQueue: string, worker: WorkerProcess): Promise<Sample[]> {
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

const sum = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);

/** Scrapes every 200 ms until `done` settles: the highest value each endpoint's in-flight gauge showed. */
async function inFlightPeaksUntil(address: string, done: Promise<unknown>): Promise<Map<string, number>> {
  const peaks = new Map<string, number>();
  let settled = false;
  void done.finally(() => (settled = true)).catch(() => undefined);
  while (!settled) {
    for (const s of (await scrape(address)).samples) {
      if (s.name === 'pivot_miner_requests_in_flight')
        peaks.set(s.labels.endpoint ?? '', Math.max(peaks.get(s.labels.endpoint ?? '') ?? 0, s.value));
    }
    await sleep(200);
  }
  return peaks;
}

/** Failure-sidecar lines per failure class. */
function sidecarClasses(file: string): Record<string, number> {
  const classes: Record<string, number> = {};
  for (const line of readJsonlSync<{ failure_class: string }>(file))
    classes[line.failure_class] = (classes[line.failure_class] ?? 0) + 1;
  return classes;
}

function metricClasses(samples: Sample[], stage: string): Record<string, number> {
  const classes: Record<string, number> = {};
  for (const s of samples) {
    if (s.name === 'pivot_miner_attempts_failed' && s.labels.stage === stage && s.value > 0)
      classes[s.labels.class ?? ''] = (classes[s.labels.class ?? ''] ?? 0) + s.value;
  }
  return classes;
}

test(
  '--metrics-port: temporal_* worker metrics, and pipeline metrics that match the run',
  { timeout: 300_000 },
  async () => {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const worker = startWorker('q-metrics-flag', ['--metrics-port', String(port)]);
    const polling = await scrapeWhenPolling(address, 'q-metrics-flag', worker);
    assert.deepEqual(listeningPorts(worker.child.pid ?? -1), [port]);
    assert.ok(
      polling.some(
        (s) => s.name === 'temporal_worker_task_slots_available' && s.labels.task_queue === 'q-metrics-flag',
      ),
    );
    assert.match(worker.output(), new RegExp(`Prometheus metrics on http://${address}/metrics`));

    const run = runPivotMining(env.client, {
      taskQueue: 'q-metrics-flag',
      configPath: 'metrics.yaml',
      runId: 'metrics-flag',
    });
    const peaks = await inFlightPeaksUntil(address, run);
    const result = await run.catch((err: unknown) =>
      assert.fail(`demo run failed: ${String((err as { cause?: { cause?: unknown } }).cause?.cause ?? err)}`),
    );

    // Requests in flight: seen while the run sent them, labelled without anything a URL could hide.
    for (const endpoint of peaks.keys()) assert.match(endpoint, /^http:\/\/127\.0\.0\.1:\d+\/[\w/]+$/);
    const peakOf = (path: RegExp) =>
      Math.max(0, ...[...peaks].filter(([endpoint]) => path.test(endpoint)).map(([, peak]) => peak));
    assert.ok(peakOf(/\/run$/) > 0, `agent /run never seen in flight: ${JSON.stringify([...peaks])}`);
    assert.ok(
      peakOf(/\/v1\/(responses|chat\/completions)$/) > 0,
      `model never seen in flight: ${JSON.stringify([...peaks])}`,
    );
    let samples = (await scrape(address)).samples;
    for (
      const deadline = Date.now() + 10_000;
      samples.some((s) => s.name === 'pivot_miner_requests_in_flight' && s.value !== 0);
    ) {
      if (Date.now() > deadline) assert.fail('requests still in flight after the run');
      await sleep(250);
      samples = (await scrape(address)).samples;
    }

    assert.ok(
      sum(samples, 'temporal_activity_execution_latency_count', {
        task_queue: 'q-metrics-flag',
        activity_type: 'runChunk',
      }) > 0,
    );
    assert.ok(result.counts.rollouts > 0 && result.counts.local_profile_rollouts > 0);
    assert.equal(sum(samples, 'pivot_miner_rollouts_completed', { stage: 'collect' }), result.counts.rollouts);
    assert.equal(
      sum(samples, 'pivot_miner_rollouts_completed', { stage: 'local_profile' }),
      result.counts.local_profile_rollouts,
    );
    assert.equal(sum(samples, 'pivot_miner_rollouts_failed', { stage: 'collect' }), result.counts.rollout_failures);
    assert.equal(
      sum(samples, 'pivot_miner_rollouts_failed', { stage: 'local_profile' }),
      result.counts.local_profile_failures,
    );

    // Failed attempts by class: one per line of each stage's failures sidecar.
    const collectFailures = sidecarClasses(path.join(result.runDir, 'rollouts_failures.jsonl'));
    const localProfileFailures = sidecarClasses(path.join(result.runDir, 'local_profile_failures.jsonl'));
    // The model's 429s fell mostly on early local profiling (overlap is on), whose sidecars go with
    // its segments once the run has reused their samples.
    const earlyFailures = metricClasses(samples, 'local_profile_early');
    assert.ok(
      (collectFailures.http_5xx ?? 0) > 0 && (localProfileFailures.http_429 ?? 0) + (earlyFailures.http_429 ?? 0) > 0,
      JSON.stringify({ collectFailures, localProfileFailures, earlyFailures }),
    );
    assert.deepEqual(metricClasses(samples, 'collect'), collectFailures);
    assert.deepEqual(metricClasses(samples, 'local_profile'), localProfileFailures);

    // Early local profiling is counted apart from the run's stage, which counts what it reused.
    const early = result.prefetch;
    assert.ok(early && early.samples > 0 && early.reused > 0, JSON.stringify(early));
    assert.equal(sum(samples, 'pivot_miner_rollouts_completed', { stage: 'local_profile_early' }), early.samples);
    assert.equal(sum(samples, 'pivot_miner_rollouts_reused', { stage: 'local_profile' }), early.reused);
    assert.equal(sum(samples, 'pivot_miner_rollouts_reused', { stage: 'collect' }), 0);

    // One duration per chunk, in milliseconds.
    const chunks = {
      collect: Math.ceil((result.counts.rollouts + result.counts.rollout_failures) / COLLECT_CHUNK_SIZE),
      local_profile: Math.ceil(
        (result.counts.local_profile_rollouts + result.counts.local_profile_failures) / LOCAL_PROFILE_CHUNK_SIZE,
      ),
    };
    for (const [stage, count] of Object.entries(chunks)) {
      assert.equal(sum(samples, 'pivot_miner_chunk_duration_count', { stage }), count, stage);
      assert.equal(sum(samples, 'pivot_miner_chunk_duration_bucket', { stage, le: '+Inf' }), count, stage);
    }
    // Every collect chunk holds slow answers (1.5 s) and retried 503s, so none takes under a second.
    assert.equal(sum(samples, 'pivot_miner_chunk_duration_bucket', { stage: 'collect', le: '1000' }), 0);
    assert.ok(sum(samples, 'pivot_miner_chunk_duration_sum', { stage: 'collect' }) >= 1500 * chunks.collect);
  },
);

test(
  `${METRICS_ADDRESS_ENV} turns metrics on; without it nothing listens; a taken port stops the worker`,
  { timeout: 180_000 },
  async () => {
    const [envPort, takenPort] = [await freePort(), await freePort()];
    const blocker: Server = await new Promise((resolve) => {
      const server = createServer().listen(takenPort, '127.0.0.1', () => resolve(server));
    });
    try {
      const viaEnv = startWorker('q-metrics-env', [], { [METRICS_ADDRESS_ENV]: `127.0.0.1:${envPort}` });
      const off = startWorker('q-metrics-off', []);
      const clash = startWorker('q-metrics-clash', ['--metrics-port', String(takenPort)]);

      const samples = await scrapeWhenPolling(`127.0.0.1:${envPort}`, 'q-metrics-env', viaEnv);
      assert.ok(samples.some((s) => s.name.startsWith('temporal_')));
      assert.deepEqual(listeningPorts(viaEnv.child.pid ?? -1), [envPort]);

      const deadline = Date.now() + 90_000;
      while (!/state: 'RUNNING'/.test(off.output())) {
        if (off.child.exitCode !== null || Date.now() > deadline)
          assert.fail(`worker without metrics did not start:\n${off.output()}`);
        await sleep(500);
      }
      assert.deepEqual(listeningPorts(off.child.pid ?? -1), []);
      assert.doesNotMatch(off.output(), /Prometheus metrics/);

      assert.notEqual(await clash.exited, 0);
      assert.match(clash.output(), /Address already in use/);
    } finally {
      blocker.close();
    }
  },
);
