import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  type LogLevel,
  type RuntimeOptions,
} from '@temporalio/worker';
import { metricsTelemetry, publishRequestsInFlight } from './metrics';

// The Temporal Runtime is process-global and created by the first NativeConnection, so every
// process that runs a worker installs it here first: the SDK's logger (and core's log filter) at
// the level asked for, and the Prometheus exporter when metrics are on. At the SDK's default level
// (INFO) a worker prints an object for every state change and task, which buries the progress
// lines of `demo` and `run`; warnings and errors still come through at WARN.

export const LOG_LEVEL_ENV = 'PIVOT_MINER_LOG_LEVEL';
const LEVELS: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** `--verbose` means the SDK's own default (INFO); otherwise PIVOT_MINER_LOG_LEVEL, else WARN. */
export function sdkLogLevel(opts: { verbose?: boolean } = {}, env: NodeJS.ProcessEnv = process.env): LogLevel {
  if (opts.verbose) return 'INFO';
  const fromEnv = env[LOG_LEVEL_ENV]?.trim().toUpperCase();
  if (!fromEnv) return 'WARN';
  if (!(LEVELS as readonly string[]).includes(fromEnv))
    throw new Error(`${LOG_LEVEL_ENV}: ${env[LOG_LEVEL_ENV]}: expected one of ${LEVELS.join(', ')}`);
  return fromEnv as LogLevel;
}

/**
 * Warnings the SDK prints for a setup we chose: the per-host worker of `servers.mode: spawn` runs
 * activities only, and the SDK warns at each start that it polls no workflow tasks.
 */
const EXPECTED_WARNINGS = new Set(['No workflows registered, not polling for workflow tasks']);

class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: Record<string, unknown>): void {
    if (!EXPECTED_WARNINGS.has(message)) super.log(level, message, meta);
  }
}

export function runtimeOptions(opts: { logLevel: LogLevel; metricsAddress?: string }): RuntimeOptions {
  return {
    logger: new WorkerLogger(opts.logLevel),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: opts.logLevel, other: 'ERROR' }) },
      ...(opts.metricsAddress ? { metrics: metricsTelemetry(opts.metricsAddress) } : {}),
    },
  };
}

let installed = false;

/** Installs the Runtime once per process; call before the first NativeConnection. */
export function installWorkerRuntime(opts: { logLevel?: LogLevel; metricsAddress?: string } = {}): void {
  if (installed) return;
  Runtime.install(runtimeOptions({ logLevel: opts.logLevel ?? sdkLogLevel(), metricsAddress: opts.metricsAddress }));
  installed = true;
  if (opts.metricsAddress) publishRequestsInFlight(Runtime.instance().metricMeter);
}
