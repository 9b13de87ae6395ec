import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';

// Processes a bench stands up besides the worker: the simulators, and readiness checks on them.

export interface SimulatorProcess {
  pid: number;
  urls: { model: string; resources: string; agent: string; head: string };
  stop(): Promise<void>;
}

/** `cpu`: the one CPU the simulators may run on (Linux's taskset), else wherever the kernel puts them. */
export async function startSimulatorProcess(seed: number, opts: { cpu?: number } = {}): Promise<SimulatorProcess> {
  const node = [process.execPath, '--import', 'tsx', path.join(__dirname, 'simulators.ts')];
  const [command, ...args] = opts.cpu === undefined ? node : ['taskset', '-c', String(opts.cpu), ...node];
  const child = spawn(command!, args, {
    env: { ...process.env, BENCH_SEED: String(seed) },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const urls = await new Promise<SimulatorProcess['urls']>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (data: Buffer) => {
      buffered += data.toString('utf8');
      const nl = buffered.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(buffered.slice(0, nl)) as SimulatorProcess['urls']);
    });
    child.once('exit', (code) => reject(new Error(`the simulator process exited during start-up (code ${code})`)));
  });
  return {
    pid: child.pid!,
    urls,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Waits until a worker polls `taskQueue` for workflow tasks, so start-up is not timed as work. */
export async function waitForPoller(client: Client, taskQueue: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const described = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: 1,
    });
    if ((described.pollers ?? []).length > 0) return;
    await sleep(250);
  }
  throw new Error(`no worker polled ${taskQueue} within ${timeoutMs / 1000} s`);
}
