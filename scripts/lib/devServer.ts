import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { portOpen } from './net';
import { temporalBinary } from './temporalCli';

// The Temporal dev server for local runs: a SQLite file under .state/ so a restart keeps workflow
// history, and the UI on its own port. A server already listening on the port is reused as is.

export interface DevServerOptions {
  port?: number;
  uiPort?: number;
  stateDir?: string;
  /** More `KEY=VALUE` dynamic config values, for a bench trying a server setting. */
  dynamicConfig?: readonly string[];
}

export interface DevServerHandle {
  address: string;
  uiUrl: string;
  /** False when an already running server was reused (then stop() leaves it alone). */
  startedHere: boolean;
  stop(): Promise<void>;
}

export async function ensureDevServer(opts: DevServerOptions = {}): Promise<DevServerHandle> {
  const port = opts.port ?? 7233;
  const uiPort = opts.uiPort ?? port + 1000;
  const address = `127.0.0.1:${port}`;
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  if (await portOpen(port)) {
    console.error(`[dev-server] reusing the Temporal server already listening on ${address}`);
    return { address, uiUrl, startedHere: false, stop: async () => undefined };
  }
  const stateDir = path.resolve(opts.stateDir ?? '.state');
  mkdirSync(stateDir, { recursive: true });
  const dbFile = path.join(stateDir, 'temporal.sqlite');
  const bin = temporalBinary();
  console.error(`[dev-server] starting ${bin} server start-dev on ${address} (history in ${dbFile}, UI ${uiUrl})`);
  const child: ChildProcess = spawn(
    bin,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(uiPort),
      '--db-filename',
      dbFile,
      '--log-level',
      'error',
      // Eager dispatch hands an activity the workflow just scheduled straight back to the worker that
      // completed the workflow task, skipping a round trip through the task queue, so a stage's
      // serial activities (materialize, the tail) start sooner. Off by default in Temporal.
      '--dynamic-config-value',
      'system.enableActivityEagerExecution=true',
      ...(opts.dynamicConfig ?? []).flatMap((value) => ['--dynamic-config-value', value]),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], detached: false },
  );
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; i < 300 && !(await portOpen(port)); i++) {
    if (exited) throw new Error(`the Temporal dev server exited during start-up (exit code ${child.exitCode})`);
    await sleep(100);
  }
  if (!(await portOpen(port))) throw new Error(`the Temporal dev server did not open ${address} within 30 s`);
  return {
    address,
    uiUrl,
    startedHere: true,
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([done, sleep(10_000).then(() => child.kill('SIGKILL'))]);
    },
  };
}
