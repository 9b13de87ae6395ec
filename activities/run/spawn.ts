import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError } from '../../contracts/errors';
import type { RunPlan } from '../../contracts/payloads';
import { resolveInside } from './configFile';

// The `ng_run` step for real: a server stack started by a worker as a managed child process. The
// activity lives as long as the run needs the servers, heartbeating; when the workflow finishes,
// fails or is cancelled, the cancellation reaches it here and the whole process group is stopped.

/** The task queue only this host's worker polls, so the spawn activity runs where its servers run. */
export function hostTaskQueue(baseQueue: string): string {
  return `${baseQueue}-host-${os.hostname()}`;
}

export async function workerHostQueue(baseQueue: string): Promise<string> {
  return hostTaskQueue(baseQueue);
}

function stopGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export async function runManagedServers(input: { plan: RunPlan }): Promise<void> {
  const { plan } = input;
  const servers = plan.config.servers;
  if (servers.mode !== 'spawn') throw new ConfigError('runManagedServers needs servers.mode = spawn');
  const ctx = Context.current();
  const cwd = resolveInside(plan.baseDir, plan.baseDir, servers.cwd ?? '.');
  const logFile = path.join(plan.runDir, 'servers.log');
  const logFd = openSync(logFile, 'a');
  const [command, ...args] = servers.command as [string, ...string[]];
  // A process group of its own, so stopping it also stops every server the command forked.
  const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const pid = child.pid;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (err) => {
      log.error('server command failed to start', { command, error: err.message });
      resolve(null);
    });
  });
  log.info('started server stack', { command: servers.command.join(' '), pid, log: logFile });
  const beat = setInterval(() => ctx.heartbeat(), 5_000);
  try {
    const outcome = await Promise.race([
      exited.then((code) => ({ code })),
      ctx.cancelled.catch((err: unknown) => ({ cancelled: err })),
    ]);
    if ('code' in outcome) {
      throw ApplicationFailure.retryable(
        `server command exited (code ${outcome.code}) while the run still needed it; see ${logFile}`,
        'ServersExited',
      );
    }
    throw outcome.cancelled;
  } finally {
    clearInterval(beat);
    if (pid !== undefined && child.exitCode === null) {
      stopGroup(pid, 'SIGTERM');
      const stopped = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
      ]);
      if (!stopped) stopGroup(pid, 'SIGKILL');
      log.info('stopped server stack', { pid });
    }
  }
}
