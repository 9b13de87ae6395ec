import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../lib/net';
import { stopProcess } from '../lib/workerProcess';
import { parseSpans, type Span } from './overlapMetrics';

// The overlap bench's engines: the fleet harness's engine simulator (a seeded policy behind a fixed
// number of slots, each call holding its slot for a fixed latency), one process per engine, each
// recording the span of every call it serves.

export interface EngineSettings {
  latencyMs: number;
  slots: number;
  seed: number;
}

export interface EngineProcess {
  url: string;
  /** Stops the engine and returns the spans it served. */
  stop(): Promise<Span[]>;
}

async function waitHealthy(url: string, exited: Promise<unknown>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  while (Date.now() < deadline && !gone) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`the engine at ${url} ${gone ? 'exited during start-up' : `did not answer within ${timeoutMs} ms`}`);
}

/** An engine process recording its served calls to `recordPath`. */
export async function startEngine(settings: EngineSettings, recordPath: string): Promise<EngineProcess> {
  const port = await freePort();
  const serve = path.join(__dirname, '../fleet/serve.ts');
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      serve,
      'engine',
      ...['--port', String(port), '--latency-ms', String(settings.latencyMs)],
      ...['--slots', String(settings.slots), '--seed', String(settings.seed), '--record', recordPath],
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(url, exited);
  return {
    url,
    async stop() {
      await stopProcess(child);
      return parseSpans(readFileSync(recordPath, 'utf8'), recordPath);
    },
  };
}
