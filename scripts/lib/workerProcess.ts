import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { repoRoot } from '../../bin/built';

// `pivot-miner worker` as a child process, the way a fleet runs it: the Temporal address, task
// queue and artifact locations come from the environment, exactly as on a real host.

export interface WorkerProcessOptions {
  temporalAddress: string;
  taskQueue: string;
  artifactsRoot?: string;
  baseDir?: string;
  /** Further variables (worker identity, API keys named in configs, …). */
  env?: Record<string, string>;
  stdio?: StdioOptions;
}

export function spawnWorkerProcess(opts: WorkerProcessOptions): ChildProcess {
  const env: NodeJS.ProcessEnv = workerProcessEnv({
    ...process.env,
    TEMPORAL_ADDRESS: opts.temporalAddress,
    PIVOT_MINER_TASK_QUEUE: opts.taskQueue,
    ...opts.env,
  });
  if (opts.artifactsRoot) env.PIVOT_MINER_ARTIFACTS_ROOT = opts.artifactsRoot;
  if (opts.baseDir) env.PIVOT_MINER_BASE_DIR = opts.baseDir;
  // The heap flags on the command line and malloc's arenas in the environment, as bin/pivot-miner.js
  // would otherwise set them in a second process: the pid returned here is the worker itself (tests and benches signal and measure it).
  return spawn(process.execPath, [...workerHeapArgs(env), path.join(repoRoot, 'bin/pivot-miner.js'), 'worker'], {
    cwd: repoRoot,
    env,
    stdio: opts.stdio ?? ['ignore', 'ignore', 'inherit'],
  });
}

/** Sends `signal` and resolves once the process has exited (at once if it already has). */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}
