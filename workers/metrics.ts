import type { Context as ActivityContext } from '@temporalio/activity';
import type { MetricMeter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { isIP } from 'node:net';
import { z } from 'zod';
import { countRequestsInFlight, requestsInFlight } from '../activities/http/inFlight';
import { replicaStats, type ReplicaStats } from '../activities/http/replicas';
import { metricsStage } from '../contracts/stageSettings';

// Prometheus scraping of a worker is off unless asked for: the Temporal SDK's own exporter serves
// /metrics (temporal_* task slot, poll and activity latency metrics), and the series below add
// what only pivot-miner knows, on the same endpoint.

export const METRICS_ADDRESS_ENV = 'PIVOT_MINER_METRICS_ADDRESS';

const portSchema = z.coerce.number().int().min(1).max(65535);

export interface MetricsFlags {
  metricsPort?: string | number;
  metricsHost?: string;
}

/**
 * Where to serve /metrics, or undefined when metrics are off. Flags win over the environment so
 * one worker of a fleet sharing an env file can still be moved to another port.
 */
export function metricsBindAddress(flags: MetricsFlags = {}, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (flags.metricsPort !== undefined) {
    const port = portSchema.safeParse(flags.metricsPort);
    if (!port.success) throw new Error(`--metrics-port: ${flags.metricsPort} is not a port (1-65535)`);
    return joinAddress(flags.metricsHost ?? '127.0.0.1', port.data, '--metrics-host');
  }
  if (flags.metricsHost !== undefined) throw new Error('--metrics-host needs --metrics-port');
  const fromEnv = env[METRICS_ADDRESS_ENV]?.trim();
  if (!fromEnv) return undefined;
  const match = /^\[(.+)\]:(\d+)$/.exec(fromEnv) ?? /^([^[\]]+):(\d+)$/.exec(fromEnv);
  const port = portSchema.safeParse(match?.[2]);
  if (!match || !port.success)
    throw new Error(`${METRICS_ADDRESS_ENV}: ${fromEnv}: expected ip:port, e.g. 127.0.0.1:9464`);
  return joinAddress(match[1] ?? '', port.data, METRICS_ADDRESS_ENV);
}

// Core's exporter takes a socket address, not a host name: "localhost:9464" is refused there, so
// it is refused here too, with the setting to fix in the message.
function joinAddress(host: string, port: number, source: string): string {
  const version = isIP(host);
  if (version === 0) throw new Error(`${source}: ${host} is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)`);
  return version === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

// Core's default millisecond buckets stop at 10 s; a chunk takes under a second on the simulators
// and up to many minutes on a real model.
const CHUNK_DURATION_BUCKETS_MS = [
  250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000,
];
const CHUNK_DURATION = 'pivot_miner_chunk_duration';

/** How often the requests-in-flight gauge is brought up to date: counting is per request, publishing is not. */
const IN_FLIGHT_SAMPLE_MS = 1000;

/**
 * The Prometheus exporter's part of the Runtime's telemetry options (workers/runtime.ts). Core
 * binds the exporter's socket when the Runtime is installed, so a taken port fails the worker at
 * start rather than silently losing metrics.
 */
export function metricsTelemetry(bindAddress: string) {
  return { prometheus: { bindAddress, histogramBucketOverrides: { [CHUNK_DURATION]: CHUNK_DURATION_BUCKETS_MS } } };
}

/**
 * Requests are counted as plain integers (activities/http/inFlight.ts) and published here once a
 * second, so a request never waits on a metric call; a scrape sees the count of the last sample.
 */
export function publishRequestsInFlight(meter: MetricMeter): void {
  countRequestsInFlight();
  const gauge = meter.createGauge(
    'pivot_miner_requests_in_flight',
    'int',
    'requests',
    'HTTP requests this worker has in flight, per endpoint',
  );
  const sampleReplicas = replicaMetricsSampler(meter);
  setInterval(() => {
    for (const { endpoint, count } of requestsInFlight()) gauge.set(count, { endpoint });
    sampleReplicas();
  }, IN_FLIGHT_SAMPLE_MS).unref();
}

/**
 * The series of a model served as replicas (a list of URLs; activities/http/replicas.ts), one per
 * replica, labelled with its host:port and its position in the config's list. A single URL has no
 * replicas, so its metrics stay what they were. Totals are kept as plain integers by the pool and
 * published here as counter increments.
 */
export function replicaMetricsSampler(
  meter: Pick<MetricMeter, 'createGauge' | 'createCounter'>,
  stats: () => Iterable<ReplicaStats> = replicaStats,
): () => void {
  const inFlight = meter.createGauge(
    'pivot_miner_replica_requests_in_flight',
    'int',
    'requests',
    'Model requests this worker has in flight, per replica',
  );
  const benched = meter.createGauge(
    'pivot_miner_replica_benched',
    'int',
    '',
    '1 while the replica is benched after failing: its requests go to the other replicas',
  );
  const requests = meter.createCounter(
    'pivot_miner_replica_requests',
    'requests',
    'Model requests that ended on the replica, whatever their outcome',
  );
  const failures = meter.createCounter(
    'pivot_miner_replica_failures',
    'requests',
    'Model requests that failed on the replica with a connection error, a 5xx or a timeout, and went to another replica or attempt',
  );
  // What each replica's totals were when last published, so each sample adds only the increase.
  const published = new Map<ReplicaStats, Map<string, number>>();
  return () => {
    for (const replica of stats()) {
      const tags = { endpoint: replica.endpoint, replica: String(replica.replica) };
      inFlight.set(replica.inFlight, tags);
      benched.set(replica.benched ? 1 : 0, tags);
      let last = published.get(replica);
      if (!last) published.set(replica, (last = new Map<string, number>()));
      const increase = (key: string, total: number) => {
        const added = total - (last.get(key) ?? 0);
        last.set(key, total);
        return added;
      };
      const ended = increase('', replica.requests);
      if (ended > 0) requests.add(ended, tags);
      for (const [failureClass, total] of replica.failures) {
        const failed = increase(failureClass, total);
        if (failed > 0) failures.add(failed, { ...tags, class: failureClass });
      }
    }
  };
}

// Chunk inputs and results are read loosely: only the fields counted here matter, and a change
// elsewhere in the payloads must not break a worker's metrics.
const chunkInputSchema = z.object({ stage: z.string(), plan: z.object({ early: z.boolean().optional() }).optional() });
const chunkResultSchema = z.object({
  completed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  reused: z.number().int().nonnegative().optional(),
  /** Set by runReusedChunks, which runs several chunks: each one's own time. */
  durationMs: z.number().nonnegative().optional(),
});

/**
 * Counts rollouts and times chunks per stage from each finished runChunk activity, and from each
 * runReusedChunks (chunks wholly answered by early samples, several an activity, each timed on its
 * own). A chunk attempt that fails is not counted: its rollouts are kept in the shard and counted
 * by the attempt that finishes it, whose duration is its own. With metrics off the activity's meter
 * is a no-op, so this costs nothing.
 */
export const rolloutMetricsInterceptor: ActivityInterceptorsFactory = (ctx: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const started = performance.now();
      const result = await next(input);
      const type = ctx.info.activityType;
      if (type !== 'runChunk' && type !== 'runReusedChunks') return result;
      const chunks = z.array(chunkResultSchema).safeParse(type === 'runChunk' ? [result] : result);
      const stage = chunkInputSchema.safeParse(input.args[0]);
      if (!chunks.success || !stage.success) return result;
      const meter = ctx.metricMeter.withTags({ stage: metricsStage(stage.data) });
      const counter = (name: string, help: string) => meter.createCounter(name, 'rollouts', help);
      const sum = (count: (chunk: z.infer<typeof chunkResultSchema>) => number) =>
        chunks.data.reduce((total, chunk) => total + count(chunk), 0);
      counter('pivot_miner_rollouts_completed', 'Rollouts written by finished chunks').add(sum((c) => c.completed));
      counter('pivot_miner_rollouts_failed', 'Rollouts that ran out of attempts in finished chunks').add(
        sum((c) => c.failed),
      );
      counter(
        'pivot_miner_rollouts_reused',
        'Of the rollouts completed, those answered from samples early local profiling took (no request)',
      ).add(sum((c) => c.reused ?? 0));
      const durations = meter.createHistogram(
        CHUNK_DURATION,
        'int',
        'ms',
        'Wall time of the chunk attempt that finished the chunk',
      );
      for (const chunk of chunks.data) durations.record(chunk.durationMs ?? Math.round(performance.now() - started));
      return result;
    },
  },
});
