// The memory a worker process runs with. Every stage streams, so a worker's live JS heap stays
// small; what makes its RSS is the room V8 and malloc keep around that live set, so a worker
// narrows three defaults (PIVOT_MINER_WORKER_HEAP_MB=0 keeps Node's and glibc's own; the figures
// behind each are in docs/architecture.md):
// - `--max-old-space-size` (PIVOT_MINER_WORKER_HEAP_MB, default 1024, still many times the live
//   set): V8 sizes the old space from its limit, and under Node's default it lets the old space
//   grow to several times the live set between full collections.
// - MALLOC_ARENA_MAX=2: glibc gives each thread that mallocs (Temporal core's Tokio threads,
//   libuv's pool) an arena of its own, up to 8 per core, and each keeps what it freed.
// - MALLOC_MMAP_THRESHOLD_=131072, glibc's own starting value, held there: by default glibc raises
//   the threshold to the size of each larger mmapped block freed, after which such blocks come from
//   the arena, whose memory it can hand back only from the top, so a long run's heap ratchets up.
// The young generation is left at V8's size: smaller semi-spaces promote the collect stage's
// in-flight bodies and cost more worker CPU than the memory they save is worth.
//
// Plain JavaScript: it runs before any TypeScript loader. V8 flags and malloc's environment only
// take effect when a process starts: bin/pivot-miner passes them to a `worker` on its command line,
// and a worker started some other way without them starts itself again with them.
'use strict';
const { spawn } = require('node:child_process');

const DEFAULT_HEAP_MB = 1024;
const HEAP_FLAG = '--max-old-space-size';
const MALLOC_ARENAS = '2';
const MALLOC_MMAP_THRESHOLD = String(128 * 1024);
/** Set in a worker started by the relaunch below, which must not outlive the process that started it. */
const RELAUNCHED = 'PIVOT_MINER_WORKER_RELAUNCHED';

/** The old-space limit in MB, 0 for Node's own; throws on a value that is not a whole number of MB. */
function workerHeapMb(env) {
  const raw = (env.PIVOT_MINER_WORKER_HEAP_MB ?? '').trim();
  const mb = raw === '' ? DEFAULT_HEAP_MB : Number(raw);
  if (!Number.isInteger(mb) || mb < 0)
    throw new Error(`PIVOT_MINER_WORKER_HEAP_MB: ${raw} is not a whole number of megabytes (0 keeps Node's default)`);
  return mb;
}

/** The node flags a worker process runs with. */
function workerHeapArgs(env = process.env) {
  const mb = workerHeapMb(env);
  return mb === 0 ? [] : [`${HEAP_FLAG}=${mb}`];
}

/** The environment a worker process runs with: `env` with malloc's arenas capped and its mmap
 * threshold held, each unless the caller set it, and neither when the memory settings are off. */
function workerProcessEnv(env = process.env) {
  if (workerHeapMb(env) === 0) return env;
  return { MALLOC_ARENA_MAX: MALLOC_ARENAS, MALLOC_MMAP_THRESHOLD_: MALLOC_MMAP_THRESHOLD, ...env };
}

function hasHeapFlag(execArgv, nodeOptions) {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some(
    (arg) => arg === HEAP_FLAG || arg.startsWith(`${HEAP_FLAG}=`),
  );
}

/**
 * Runs this `worker` command again in a child with the heap flag and environment, unless the
 * process already has an old-space limit (our own launchers pass both) or none is wanted; returns
 * whether it did. Signals are passed on, and the child's exit is this process's exit. If this
 * process dies without passing anything on (a SIGKILL), the child sees its IPC channel close and
 * kills itself, so no worker outlives it.
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
    env: workerProcessEnv({ ...process.env, [RELAUNCHED]: '1' }),
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

module.exports = { workerHeapArgs, workerProcessEnv, relaunchWorkerWithHeapLimit };
