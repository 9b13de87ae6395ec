import type { Context as ActivityContext } from '@temporalio/activity';
import { Runtime, type ActivityInterceptorsFactory } from '@temporalio/worker';
import { isIP } from 'node:net';
import { z } from 'zod';

// Prometheus scraping of a worker is off unless asked for: the Temporal SDK's own exporter serves
// /metrics (temporal_* task slot, poll and activity latency metrics), and the counters below add
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
  if (!match || !port.success) throw new Error(`${METRICS_ADDRESS_ENV}: ${fromEnv}: expected ip:port, e.g. 127.0.0.1:9464`);
  return joinAddress(match[1] ?? '', port.data, METRICS_ADDRESS_ENV);
}

// Core's exporter takes a socket address, not a host name: "localhost:9464" is refused there, so
// it is refused here too, with the setting to fix in the message.
function joinAddress(host: string, port: number, source: string): string {
  const version = isIP(host);
  if (version === 0) throw new Error(`${source}: ${host} is not an IP address (e.g. 127.0.0.1, 0.0.0.0, ::1)`);
  return version === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Starts the Prometheus exporter. The Runtime is process-global and is created by the first
 * NativeConnection, so this must run before connecting; the exporter's socket is bound right here,
 * which makes a taken port fail the worker at start rather than silently losing metrics.
 */
export function installMetricsRuntime(bindAddress: string): void {
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
}

// Chunk inputs and results are read loosely: only the fields counted here matter, and a change
// elsewhere in the payloads must not break a worker's metrics.
const chunkInputSchema = z.object({ stage: z.string() });
const chunkResultSchema = z.object({ completed: z.number().int().nonnegative(), failed: z.number().int().nonnegative() });

/**
 * Counts rollouts per stage from each finished runChunk activity. A chunk attempt that fails is
 * not counted: its rollouts are kept in the shard and counted by the attempt that finishes it.
 * With metrics off the activity's meter is a no-op, so this costs nothing.
 */
export const rolloutMetricsInterceptor: ActivityInterceptorsFactory = (ctx: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const result = await next(input);
      if (ctx.info.activityType !== 'runChunk') return result;
      const chunk = chunkResultSchema.safeParse(result);
      const stage = chunkInputSchema.safeParse(input.args[0]);
      if (chunk.success && stage.success) {
        const meter = ctx.metricMeter.withTags({ stage: stage.data.stage });
        meter.createCounter('pivot_miner_rollouts_completed', 'rollouts', 'Rollouts written by finished chunks').add(chunk.data.completed);
        meter.createCounter('pivot_miner_rollouts_failed', 'rollouts', 'Rollouts that ran out of attempts in finished chunks').add(chunk.data.failed);
      }
      return result;
    },
  },
});
