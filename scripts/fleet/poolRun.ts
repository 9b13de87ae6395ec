import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import {
  awaitCurriculumStart,
  createNightlySchedule,
  deleteSchedule,
  startPivotCurriculum,
  submitPolicyCheckpoint,
  triggerScheduleAndAwait,
} from '../../client';
import { POOL_CONFIG, writePoolInputs } from '../chaos/poolPhase';
import type { Cluster } from './cluster';
import type { Reference } from './scenarios';
import { fleetConfig, type RunSettings } from './runConfig';

// The pool half of a cluster run, as issue #63 asks ("the workers, schedules and curriculum run
// against it"): a nightly Schedule mines the reference run's rollouts into a pool version while one
// Temporal node is lost, then a curriculum round re-profiles that version under a policy checkpoint.
// Everything goes through the client functions `pivot-miner schedule` and `curriculum` use.

export interface PoolHalfResult {
  schedule_version: string;
  pivots: number;
  /** Whether the node was lost while the scheduled run was still going (a short run can end first). */
  lost_node_during_run: boolean;
  /** Lines of the round's pivots.jsonl (the run fails when the round wrote none). */
  curriculum_round_pivots: number;
  seconds: number;
}

const SCHEDULE_ID = 'fleet-nightly';
const CURRICULUM_ID = 'fleet-curriculum';
/** Each wait is bounded: a nightly run or a round takes tens of seconds on this fleet. */
const STEP_TIMEOUT_MS = 10 * 60_000;
/** After the trigger, long enough for the run to be under way before its node goes. */
const LOSE_NODE_AFTER_MS = 3_000;
const DOWN_MS = 5_000;

function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`pool half: ${what} took over ${STEP_TIMEOUT_MS / 1000} s`)),
      STEP_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Pivots in a published pivots.jsonl: its lines, as a consumer reads them. */
function lineCount(file: string): number {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '').length
    : 0;
}

/** The scheduled nightly run, with the node worker-1 dials lost while it runs. */
async function scheduledRun(
  client: Client,
  cluster: Cluster,
  log: (l: string) => void,
): Promise<{ version: string; pivots: number; lostDuringRun: boolean }> {
  let ended = false;
  const run = triggerScheduleAndAwait(client, SCHEDULE_ID).finally(() => (ended = true));
  await sleep(LOSE_NODE_AFTER_MS);
  const lostDuringRun = !ended;
  const node = cluster.temporalCluster.nodeFor(cluster.workers[0]!);
  await cluster.temporalCluster.loseNode(node, DOWN_MS);
  log(`[fleet] pool: lost ${node} ${lostDuringRun ? 'during' : 'after'} the scheduled run; a fresh one is back`);
  const nightly = await within('the scheduled nightly run', run);
  const pivots = nightly.pivotsPath === null ? 0 : lineCount(nightly.pivotsPath);
  if (nightly.status !== 'published' || nightly.versionId === null || pivots === 0)
    throw new Error(`pool half: the scheduled run published no pivots (${nightly.status}): ${nightly.message}`);
  return { version: nightly.versionId, pivots, lostDuringRun };
}

async function curriculumRound(client: Client, cluster: Cluster): Promise<number> {
  const opts = { workflowId: CURRICULUM_ID, taskQueue: cluster.opts.taskQueue };
  await startPivotCurriculum(client, { config_path: POOL_CONFIG }, opts);
  try {
    await within('the curriculum start', awaitCurriculumStart(client, CURRICULUM_ID));
    const round = await within(
      'the curriculum round',
      submitPolicyCheckpoint(client, CURRICULUM_ID, { model: 'sim-policy@step-1', training_step: 1 }),
    );
    if (!existsSync(round.pivotsPath)) throw new Error(`pool half: round ${round.round} wrote no ${round.pivotsPath}`);
    return lineCount(round.pivotsPath);
  } finally {
    await client.workflow.getHandle(CURRICULUM_ID).cancel();
  }
}

/** Runs on the fleet's workers after the matrix; the schedule is deleted and workers stopped whatever happens. */
export async function runPoolHalf(
  cluster: Cluster,
  reference: Reference,
  s: RunSettings,
  log: (l: string) => void,
): Promise<PoolHalfResult> {
  cluster.artifactsRoot = path.join(cluster.sharedDir, 'artifacts', 'pool');
  mkdirSync(cluster.artifactsRoot, { recursive: true });
  writePoolInputs(cluster.sharedDir, fleetConfig(cluster, s), path.join(reference.result.runDir, 'rollouts.jsonl'));
  while (cluster.workers.length < s.workers) cluster.addWorker();
  const t0 = Date.now();
  // The driver dials the node the fault spares, so only the workers lose their frontend.
  const nodes = cluster.temporalCluster;
  const spared = nodes.nodes.find((n) => n !== nodes.nodeFor(cluster.workers[0]!))!;
  const connection = await Connection.connect({ address: nodes.frontend(spared) });
  const client = new Client({ connection });
  try {
    await createNightlySchedule(client, {
      schedule_id: SCHEDULE_ID,
      input: { config_path: POOL_CONFIG },
      cron: '0 2 * * *',
      task_queue: cluster.opts.taskQueue,
      note: 'fleet: triggered by the driver',
    });
    try {
      const nightly = await scheduledRun(client, cluster, log);
      const round = await curriculumRound(client, cluster);
      const result: PoolHalfResult = {
        schedule_version: nightly.version,
        pivots: nightly.pivots,
        lost_node_during_run: nightly.lostDuringRun,
        curriculum_round_pivots: round,
        seconds: (Date.now() - t0) / 1000,
      };
      log(`[fleet] pool: ${JSON.stringify(result)}`);
      return result;
    } finally {
      await deleteSchedule(client, SCHEDULE_ID);
    }
  } finally {
    await connection.close();
    await cluster.stopWorkers();
  }
}
