import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { prefetchProgressQuery } from '../../contracts/temporal';
import type { Cluster } from './cluster';
import type { RunSettings } from './runConfig';

// The faults a scenario injects into a running fleet: which ones there are, waiting for the step
// each aims at, and doing it to the host that runs that step.

export type FaultKind =
  /** A worker host cut off longer than the chunk heartbeat timeout, healed before the run ends. */
  | 'partition_worker'
  /** The same, healed only after the run has ended. */
  | 'partition_worker_until_end'
  /** Every process of a worker host SIGKILLed, its /tmp dropped; a fresh host joins. */
  | 'lose_worker'
  /** Every process of a worker host stopped (SIGSTOP), continued only after the run has ended. */
  | 'pause_worker_until_end'
  /** One engine replica cut off (its calls move to the other) and the gym host cut off briefly. */
  | 'partition_engine_and_gym'
  /** One engine replica's host lost for good. */
  | 'lose_engine'
  /** The Temporal host's server stopped and started on its SQLite file. */
  | 'restart_temporal'
  /** A cluster's Temporal node host lost (SIGKILL, namespace gone) and a fresh one back on its address. */
  | 'lose_temporal_node'
  /** A cluster's PostgreSQL stopped (fast shutdown) and started again on its data directory. */
  | 'restart_postgres';

/**
 * merge: a stage's merges during its chunks; finish: the stage's last step (merge, profile, publish of
 * its files); early: early profiling's filing passes.
 */
export type FaultStage = 'collect' | 'local_profile' | 'merge' | 'finish' | 'early';

export interface Fault {
  kind: FaultKind;
  stage: FaultStage;
}

/** How long a lost Temporal node or a stopped PostgreSQL stays away. */
const DOWN_MS = 5_000;
const STEP_ACTIVITIES: Partial<Record<FaultStage, ReadonlySet<string>>> = {
  merge: new Set(['mergeChunks']),
  finish: new Set(['finishStage']),
  // Its filing passes, over the run's every local-profile row: a segment's build of the fleet's 160
  // collect rows ends before a fault can land.
  early: new Set(['alignPrefetched', 'alignPending']),
};
/** The activity types of the step a fault stage aims at, if it aims at one (not at chunks). */
export function stepActivities(stage: FaultStage): ReadonlySet<string> {
  return STEP_ACTIVITIES[stage] ?? new Set();
}

// Whether a fault hit the step it aimed at is told by retried_activities afterwards (an attempt
// after the first of that type): a step seen running can still end before the fault lands.

/**
 * Faults that cost the attempt they hit: its host is gone, cut off or stopped past the step's
 * heartbeat timeout (2 minutes for the filing passes; a 25 s partition heals inside it). A server
 * restart does not: the worker's attempt goes on and reports once the server is back.
 */
const COSTS_THE_ATTEMPT: ReadonlySet<FaultKind> = new Set([
  'partition_worker_until_end',
  'lose_worker',
  'pause_worker_until_end',
]);

/**
 * Whether the scenario must show the step retried: an early fault that costs its attempt. Early
 * profiling's filing passes are why those scenarios exist, so one that missed them (the pass ended
 * before the fault landed) fails rather than passing on a run the fault never touched.
 */
export function mustRetryStep(fault: Fault): boolean {
  return fault.stage === 'early' && COSTS_THE_ATTEMPT.has(fault.kind);
}

interface Target {
  worker?: string;
}

/**
 * The chunked workflows that run a stage now: the stage's child, and for local profiling also the
 * segments profiled early while collect runs (`overlap: true`), which is where most of its chunks
 * and merges then are (a segment has no finish: the run's local profile is the only one).
 */
async function stageWorkflows(client: Client, workflowId: string, stage: string): Promise<string[]> {
  if (stage === 'early') return [`${workflowId}/prefetch`];
  if (stage !== 'local_profile') return [`${workflowId}/${stage}`];
  const early = await client.workflow
    .getHandle(`${workflowId}/prefetch`)
    .query(prefetchProgressQuery)
    .catch(() => undefined);
  return [...(early?.running ?? []), `${workflowId}/${stage}`];
}

/**
 * Waits until the step a fault aims at is running, and says which worker host runs it: a chunk
 * that has been running a couple of seconds (so the partition lands mid-chunk), or one of the
 * stage's merge/finish activities. Gives up when the step is over (`hit` false) so a run never hangs.
 */
export async function waitForStep(
  client: Client,
  workflowId: string,
  fault: Fault,
  done: () => boolean,
): Promise<{ hit: boolean; target: Target; activity: string }> {
  // Merges and the finish aimed at are local profiling's: with some 2,000 rows they run long enough
  // (tens to hundreds of ms) for a fault to land while they run; collect's 160 rows pass in a blink.
  // Early profiling's steps run in its own workflow.
  const types = STEP_ACTIVITIES[fault.stage];
  const aimsAtStep = types !== undefined;
  const stage = fault.stage === 'merge' || fault.stage === 'finish' ? 'local_profile' : fault.stage;
  const chunkSeenAt = new Map<string, number>();
  while (!done()) {
    for (const id of await stageWorkflows(client, workflowId, stage)) {
      const d = await client.workflow
        .getHandle(id)
        .describe()
        .catch(() => undefined);
      // The stage's own child over: the step is past.
      const own = stage === 'early' ? `${workflowId}/prefetch` : `${workflowId}/${stage}`;
      if (d && d.status.name !== 'RUNNING' && id === own) return { hit: false, target: {}, activity: '' };
      for (const a of d?.status.name === 'RUNNING' ? (d.raw.pendingActivities ?? []) : []) {
        const type = a.activityType?.name ?? '';
        const started = a.state === temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
        if (!started || !(types ? types.has(type) : type === 'runChunk')) continue;
        if (!aimsAtStep) {
          const seen = chunkSeenAt.get(id) ?? Date.now();
          chunkSeenAt.set(id, seen);
          if (Date.now() - seen < 2_000) continue;
        }
        return { hit: true, target: { worker: a.lastWorkerIdentity ?? undefined }, activity: type };
      }
    }
    await sleep(aimsAtStep ? 20 : 250);
  }
  return { hit: false, target: {}, activity: '' };
}

/** What a scenario undoes once its run has ended, and the undoing it waits for. */
export interface FaultState {
  healAtEnd: string[];
  resumeAtEnd: string[];
  background: Promise<unknown>[];
}

export async function applyFault(
  cluster: Cluster,
  fault: Fault,
  target: Target,
  s: RunSettings,
  log: (l: string) => void,
  state: FaultState,
): Promise<void> {
  const worker = target.worker && cluster.workers.includes(target.worker) ? target.worker : cluster.workers[0]!;
  switch (fault.kind) {
    case 'partition_worker': {
      cluster.net.partition(worker);
      log(`[fleet]   ${fault.stage}: partitioned ${worker} for ${s.partitionSeconds} s`);
      state.background.push(
        sleep(s.partitionSeconds * 1000).then(() => {
          if (cluster.net.hosts.has(worker)) cluster.net.heal(worker);
          log(`[fleet]   healed ${worker}`);
        }),
      );
      return;
    }
    case 'partition_worker_until_end':
      cluster.net.partition(worker);
      state.healAtEnd.push(worker);
      log(`[fleet]   ${fault.stage}: partitioned ${worker} until the run ends`);
      return;
    case 'pause_worker_until_end':
      cluster.net.pause(worker);
      state.resumeAtEnd.push(worker);
      log(`[fleet]   ${fault.stage}: paused ${worker} (SIGSTOP) until the run ends`);
      return;
    case 'lose_worker': {
      await cluster.loseWorker(worker);
      const fresh = cluster.addWorker();
      log(`[fleet]   ${fault.stage}: lost ${worker} (SIGKILL, /tmp dropped); ${fresh} joined`);
      return;
    }
    case 'partition_engine_and_gym': {
      const engine = cluster.engines[0]!;
      cluster.net.partition(engine);
      cluster.net.partition('gym');
      log(`[fleet]   ${fault.stage}: partitioned ${engine} for 20 s and gym for 4 s`);
      state.background.push(
        sleep(4_000).then(() => cluster.net.heal('gym')),
        sleep(20_000).then(() => cluster.net.heal(engine)),
      );
      return;
    }
    case 'lose_engine': {
      const engine = cluster.engines[0]!;
      await cluster.loseEngine(engine);
      log(`[fleet]   ${fault.stage}: lost ${engine}`);
      return;
    }
    case 'restart_temporal':
      log(`[fleet]   ${fault.stage}: restarting the Temporal host's server`);
      await cluster.restartTemporal();
      return;
    case 'lose_temporal_node': {
      // The node the worker running the step dials: that worker loses its frontend too.
      const node = cluster.temporalCluster.nodeFor(worker);
      await cluster.temporalCluster.loseNode(node, DOWN_MS);
      log(`[fleet]   ${fault.stage}: lost ${node} (the node ${worker} dials); a fresh one is back`);
      return;
    }
    case 'restart_postgres':
      log(`[fleet]   ${fault.stage}: restarting PostgreSQL`);
      await cluster.temporalCluster.pg.restart(DOWN_MS);
      return;
  }
}
