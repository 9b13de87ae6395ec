import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { portOpen } from '../lib/net';

// Waiting for a fleet host's server to listen, bounded, failing with the host's last log lines when
// its process dies first.

/** The last lines a host logged, so that a process that died at start-up says why. */
function logTail(logFile: string | undefined): string {
  if (!logFile || !existsSync(logFile)) return '';
  const lines = readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-20);
  return `; last lines of ${logFile}:\n${lines.join('\n')}`;
}

export async function waitForPort(
  host: string,
  port: number,
  what: string,
  child: ChildProcess,
  logFile?: string,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${what} exited during start-up (${child.exitCode ?? child.signalCode})${logTail(logFile)}`);
    if (await portOpen(port, host)) return;
    await sleep(200);
  }
  throw new Error(`${what} did not open ${host}:${port} within ${timeoutMs / 1000} s`);
}
