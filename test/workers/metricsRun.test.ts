import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import YAML from 'yaml';
import { freePort } from '../../scripts/lib/net';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining } from '../helpers/temporal';
import {
  listeningPorts,
  metricsWorkersForFile,
  repoRoot,
  scrape,
  scrapeWhenPolling,
  sum,
  type Sample,
} from './metricsSetup';

// The demo pipeline with faults in front of the embedded servers, so the failure counters have
// something to count and some requests stay in flight long enough for a scrape to see them: each
// task's rollout 0 gets one 503 and rollout 1 one slow answer from the agent; the model answers
// some local-profile requests with a 429 or slowly, once each.
const COLLECT_CHUNK_SIZE = 16;
const LOCAL_PROFILE_CHUNK_SIZE = 32;

function writeFaultyDemoConfig(baseDir: string): void {
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

const workers = metricsWorkersForFile(writeFaultyDemoConfig);

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
    const worker = workers.start('q-metrics-flag', ['--metrics-port', String(port)]);
    const polling = await scrapeWhenPolling(address, 'q-metrics-flag', worker);
    assert.deepEqual(listeningPorts(worker.child.pid ?? -1), [port]);
    assert.ok(
      polling.some(
        (s) => s.name === 'temporal_worker_task_slots_available' && s.labels.task_queue === 'q-metrics-flag',
      ),
    );
    assert.match(worker.output(), new RegExp(`Prometheus metrics on http://${address}/metrics`));

    const run = runPivotMining(workers.env().client, {
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
