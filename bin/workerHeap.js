// The V8 heap a worker process runs with. Every stage streams, so a worker's live JS heap stays
// small (40-60 MB), but V8 sizes the heap from its limit: under Node's default limit here (4 GB) it
// lets the old space grow to four times the live set between full collections, and that garbage is
// most of a busy worker's RSS (a 10k-rollout local profile peaked at 366 MB). Under a limit below
// 2 GB, V8 grows the heap by at most 1.3-2x instead (1.6x at 1 GB): the same stage peaked at 276 MB.
// So workers run with `--max-old-space-size`, from PIVOT_MINER_WORKER_HEAP_MB (default 1024, still
// some 20 times the live set; 0 keeps Node's own limit).
//
// Plain JavaScript: it runs before any TypeScript loader, and V8 flags only take effect when a
// process starts, so a worker started without them starts itself again with them.
'use strict';
const { spawn } = require('node:child_process');

const DEFAULT_HEAP_MB = 1024;
const HEAP_FLAG = '--max-old-space-size';
/** Set in a worker started by the relaunch below, which must not outlive the process that started it. */
const RELAUNCHED = 'PIVOT_MINER_WORKER_RELAUNCHED';

/** The node flags a worker process runs with; throws on a value that is not a whole number of MB. */
function workerHeapArgs(env = process.env) {
  const raw = (env.PIVOT_MINER_WORKER_HEAP_MB ?? '').trim();
  const mb = raw === '' ? DEFAULT_HEAP_MB : Number(raw);
  if (!Number.isInteger(mb) || mb < 0) throw new Error(`PIVOT_MINER_WORKER_HEAP_MB: ${raw} is not a whole number of megabytes (0 keeps Node's default)`);
  return mb === 0 ? [] : [`${HEAP_FLAG}=${mb}`];
}

function hasHeapFlag(execArgv, nodeOptions) {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`));
}

/**
 * Runs this `worker` command again in a child with the heap flag, unless the process already has
 * one (our own launchers pass it) or none is wanted; returns whether it did. Signals are passed on,
 * and the child's exit is this process's exit. If this process dies without passing anything on (a
 * SIGKILL), the child sees its IPC channel close and kills itself, so no worker outlives it.
 */
function relaunchWorkerWithHeapLimit() {
  if (process.env[RELAUNCHED] === '1') {
    if (process.channel) {
      process.channel.unref();
      process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
    }
    return false;
  }
  const args = workerHeapArgs();
  if (args.length === 0 || hasHeapFlag(process.execArgv, process.env.NODE_OPTIONS)) return false;
  const child = spawn(process.execPath, [...args, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [RELAUNCHED]: '1' },
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const forward = (signal) => child.kill(signal);
  for (const signal of signals) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
  return true;
}

module.exports = { workerHeapArgs, relaunchWorkerWithHeapLimit };
