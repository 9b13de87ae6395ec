import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { bounded } from '../lib/bounded';
import { freePort, portOpen } from '../lib/net';
import { temporalBinary } from '../lib/temporalCli';

// A Temporal dev server the chaos driver can stop and start again on the same port and SQLite file,
// which is what a real restart looks like to workers (TestWorkflowEnvironment cannot restart).

export interface RestartableTemporal {
  address: string;
  restarts: number;
  /** Stops the server (SIGTERM, SIGKILL after 10 s) and starts it again on the same port and file. */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRestartableTemporal(opts: {
  dbFile: string;
  logFile: string;
}): Promise<RestartableTemporal> {
  const bin = temporalBinary();
  const [port, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--http-port', String(httpPort)];
    args.push(
      '--metrics-port',
      String(metricsPort),
      '--headless',
      '--db-filename',
      opts.dbFile,
      '--log-level',
      'error',
    );
    const started = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout?.pipe(log, { end: false });
    started.stderr?.pipe(log, { end: false });
    child = started;
    for (let i = 0; i < 600; i++) {
      if (started.exitCode !== null)
        throw new Error(
          `the Temporal dev server exited during start-up (code ${started.exitCode}); see ${opts.logFile}`,
        );
      if (await portOpen(port)) return;
      await sleep(100);
    }
    throw new Error(`the Temporal dev server did not open port ${port} within 60 s; see ${opts.logFile}`);
  }

  async function stopChild(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await bounded(exited, 10_000, 'the Temporal dev server exiting on SIGTERM').catch(() => running.kill('SIGKILL'));
    await bounded(exited, 10_000, `the Temporal dev server (pid ${running.pid}) exiting on SIGKILL`);
  }

  await start();
  const handle: RestartableTemporal = {
    address: `127.0.0.1:${port}`,
    restarts: 0,
    async restart(downMs = 1_000) {
      await stopChild();
      await sleep(downMs);
      await start();
      handle.restarts++;
    },
    async stop() {
      await stopChild();
      log.end();
    },
  };
  return handle;
}
