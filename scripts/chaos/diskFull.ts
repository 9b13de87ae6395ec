import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, type WorkflowHandle } from '@temporalio/client';
import { getProgress } from '../../client';
import { pivotMiningProgressQuery } from '../../contracts/temporal';
import { PUBLISHED_DIGESTS_FILE, publishedDigestsSchema } from '../../gym/publishedDigests';
import { checkRolloutKeys, compareRunDirs } from './compare';
import type { PowerHost } from './powerHost';
import type { DiskFullRecord } from './powerLossReport';
import { settle } from './workflowEnd';

// The full disk: once local profiling has begun (collect's files are published by then), every write
// on the host's disk fails, ENOSPC a few times and then EIO, for a while. The failing step must
// retry with backoff and leave what was published alone; once the room is back the run must finish
// with the undisturbed run's bytes.

const ENOSPC_BEFORE_EIO = 3;
const FULL_FOR_MS = 45_000;

export interface DiskFullArgs {
  handle: WorkflowHandle;
  host: PowerHost;
  /** The undisturbed run's directory. */
  reference: string;
  finishTimeoutMs: number;
  log: (line: string) => void;
}

/**
 * Digests of what the run has published: the files its completed steps recorded in the sidecar (a
 * file a step is still writing, such as materialized inputs half made, is not published yet).
 */
function publishedDigests(runDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const sidecar = path.join(runDir, PUBLISHED_DIGESTS_FILE);
  if (!existsSync(sidecar)) return out;
  for (const name of Object.keys(publishedDigestsSchema.parse(JSON.parse(readFileSync(sidecar, 'utf8'))).files)) {
    const file = path.join(runDir, name);
    out.set(name, existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'missing');
  }
  return out;
}

async function waitForStage(handle: WorkflowHandle, stage: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const progress = await handle.query(pivotMiningProgressQuery).catch(() => undefined);
    if (progress?.stage === stage) return true;
    await sleep(250);
  }
  return false;
}

export async function runDiskFull(args: DiskFullArgs): Promise<{ seconds: number; record: DiskFullRecord }> {
  const { handle, host, log } = args;
  const t0 = Date.now();
  const runDir = path.join(host.artifactsRoot, 'runs', 'chaos');
  if (!(await waitForStage(handle, 'local_profile', args.finishTimeoutMs)))
    throw new Error('the disk-full run never reached local_profile');
  const published = publishedDigests(runDir);
  if (published.size === 0)
    throw new Error(`${runDir} has published nothing by local_profile: no sidecar to check against`);
  await host.fs.fill(0, ENOSPC_BEFORE_EIO);
  log(`[power-loss] disk full during local_profile (${ENOSPC_BEFORE_EIO} ENOSPC, then EIO)`);
  const failures = new Set<string>();
  const client = new Client({ connection: handle.client.connection, namespace: handle.client.options.namespace });
  for (const end = Date.now() + FULL_FOR_MS; Date.now() < end; await sleep(1_000)) {
    // What `pivot-miner status` lists as waiting: the run's, its stage's and early profiling's retries.
    const { waiting } = await getProgress(client, handle.workflowId).catch(() => ({ waiting: [] }));
    for (const r of waiting) failures.add(`${r.activityType} attempt ${r.attempt}: ${r.lastFailure}`);
  }
  const stats = await host.fs.stats();
  const after = publishedDigests(runDir);
  const changed = [...published].filter(([name, digest]) => after.get(name) !== digest).map(([name]) => name);
  await host.fs.free();
  log('[power-loss] disk has room again');
  const outcome = await settle(handle, args.finishTimeoutMs);
  const comparison =
    'result' in outcome ? compareRunDirs(args.reference, runDir) : { identical: false, differing: [outcome.failure] };
  const keys = checkRolloutKeys(runDir, args.reference);
  return {
    seconds: (Date.now() - t0) / 1000,
    record: {
      recovered: 'result' in outcome,
      identical: comparison.identical && keys.duplicateKeys === 0 && keys.missingKeys === 0,
      differing: comparison.differing,
      enospc: stats.enospc,
      eio: stats.eio,
      failures: [...failures],
      published_changed: changed,
    },
  };
}
