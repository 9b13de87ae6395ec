import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { checkRolloutKeys, compareRunDirs } from '../chaos/compare';
import { waitForResult } from '../chaos/workflowEnd';
import type { Cluster } from './cluster';
import { applyFault, mustRetryStep, stepActivities, waitForStep, type Fault, type FaultState } from './faults';
import { activitySeconds, changedFiles, retriedActivities, retriedLines, snapshot } from './runChecks';
import type { RunSettings } from './runConfig';

// Fault scenarios on a fleet, each judged against an undisturbed run of the same seed on the same
// fleet: the artifacts (compared as the chaos harness compares them), the (task, rollout) keys, every
// file of the run directory left alone after the workflow completed, and the retried lines.

export interface ScenarioResult {
  name: string;
  faults: string[];
  /** Whether each fault hit the step it aimed at (a short step can end before the driver sees it). */
  hit: boolean[];
  /** The activity type each fault's step was running when the fault landed ('' when it missed). */
  steps: string[];
  /** Steps a fault that costs its attempt aimed at (mustRetryStep) with no attempt after the first: it missed. */
  unretried_steps: string[];
  identical: boolean;
  differing: string[];
  duplicate_keys: number;
  missing_keys: number;
  writes_after_completion: number;
  changed_after_completion: string[];
  retried_lines: Record<string, number>;
  unexplained_retried_lines: number;
  /** Activity attempts after the first, by stage and type, from the histories: where a fault made Temporal retry. */
  retried_activities: Record<string, number>;
  seconds: number;
}

export interface Reference {
  result: PivotMiningResult;
  seconds: number;
}

let runCounter = 0;
/** A run takes minutes; one that has not closed in this long is stuck, and the harness says so. */
const RUN_TIMEOUT_MS = 20 * 60_000;

/** Each run under an artifacts root of its own, with one run id for all, as the chaos harness does. */
function useArtifactsRoot(cluster: Cluster, name: string): void {
  cluster.artifactsRoot = path.join(cluster.sharedDir, 'artifacts', name);
  mkdirSync(cluster.artifactsRoot, { recursive: true });
}

async function startRun(
  cluster: Cluster,
  name: string,
  configPath: string,
): Promise<{ client: Client; connection: Connection; handle: WorkflowHandle; workflowId: string }> {
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  const client = new Client({ connection });
  const workflowId = `fleet-${name}-${process.pid}-${++runCounter}`;
  const handle = await client.workflow.start('pivotMiningWorkflow', {
    taskQueue: cluster.opts.taskQueue,
    workflowId,
    args: [{ config_path: configPath, run_id: 'fleet' }],
  });
  return { client, connection, handle, workflowId };
}

/** The undisturbed run every scenario is compared with. */
export async function runReference(
  cluster: Cluster,
  s: RunSettings,
  configPath: string,
  log: (l: string) => void,
  name = 'reference',
): Promise<Reference> {
  useArtifactsRoot(cluster, name);
  while (cluster.workers.length < s.workers) cluster.addWorker();
  const t0 = Date.now();
  const { client, connection, handle, workflowId } = await startRun(cluster, name, configPath);
  try {
    const result = await waitForResult(handle, RUN_TIMEOUT_MS);
    const seconds = (Date.now() - t0) / 1000;
    log(
      `[fleet] ${name} run: ${result.counts.rollouts} rollouts, ${result.counts.local_profile_rollouts} local-profile rollouts, ${result.counts.published} pivots in ${seconds.toFixed(1)} s`,
    );
    // How long early profiling's filing passes ran: the window an early fault has to land in.
    const passes = await activitySeconds(client, `${workflowId}/prefetch`, stepActivities('early'));
    if (passes.length)
      log(`[fleet]   filing passes: ${passes.map(([t, sec]) => `${t} ${sec.toFixed(2)} s`).join(', ')}`);
    return { result, seconds };
  } finally {
    await connection.close();
    await cluster.stopWorkers();
  }
}

/** One disturbed run: faults applied in order as their steps come up, then judged against the reference. */
export async function runScenario(
  cluster: Cluster,
  name: string,
  faults: Fault[],
  reference: Reference,
  s: RunSettings,
  configPath: string,
  log: (l: string) => void,
): Promise<ScenarioResult> {
  useArtifactsRoot(cluster, name);
  while (cluster.workers.length < s.workers) cluster.addWorker();
  const t0 = Date.now();
  const { client, connection, handle, workflowId } = await startRun(cluster, name, configPath);
  const state: FaultState = { healAtEnd: [], resumeAtEnd: [], background: [] };
  const hit: boolean[] = [];
  const steps: string[] = [];
  let finished = false;
  const resultPromise = waitForResult(handle, RUN_TIMEOUT_MS);
  void resultPromise.finally(() => (finished = true)).catch(() => undefined);
  try {
    log(`[fleet] scenario ${name}`);
    for (const fault of faults) {
      const step = await waitForStep(client, workflowId, fault, () => finished);
      hit.push(step.hit);
      steps.push(step.activity);
      if (!finished) await applyFault(cluster, fault, step.target, s, log, state);
    }
    const result = await resultPromise;
    const seconds = (Date.now() - t0) / 1000;
    // Recorded the moment the workflow completed, before any partitioned host is healed.
    const atCompletion = snapshot(result.runDir);
    undoAtEnd(cluster, state);
    if (state.healAtEnd.length) log(`[fleet]   healed ${state.healAtEnd.join(', ')} after the run ended`);
    if (state.resumeAtEnd.length) log(`[fleet]   continued ${state.resumeAtEnd.join(', ')} after the run ended`);
    await Promise.all(state.background);
    await sleep(s.watchSeconds * 1000);
    const changed = changedFiles(atCompletion, snapshot(result.runDir));
    const comparison = compareRunDirs(reference.result.runDir, result.runDir);
    const keys = checkRolloutKeys(result.runDir);
    const retried = retriedLines(result.runDir);
    const retriedActivityCounts = await retriedActivities(client, workflowId);
    return {
      name,
      faults: faults.map((f) => `${f.kind}@${f.stage}`),
      hit,
      steps,
      unretried_steps: faults.flatMap((f, i) =>
        mustRetryStep(f) && !retriedActivityCounts[`${f.stage}/${steps[i]}`] ? [steps[i] || `${f.stage} (missed)`] : [],
      ),
      identical: comparison.identical,
      differing: comparison.differing,
      duplicate_keys: keys.duplicateKeys,
      missing_keys: keys.missingKeys,
      writes_after_completion: changed.length,
      changed_after_completion: changed,
      retried_lines: retried.byFile,
      unexplained_retried_lines: retried.unexplained,
      retried_activities: retriedActivityCounts,
      seconds,
    };
  } finally {
    undoAtEnd(cluster, state);
    await connection.close();
    await cluster.stopWorkers();
    await cluster.restoreEngines();
  }
}

/** Heals the partitioned hosts and continues the paused ones still there (idempotent). */
function undoAtEnd(cluster: Cluster, state: FaultState): void {
  for (const w of state.healAtEnd) if (cluster.net.hosts.has(w)) cluster.net.heal(w);
  for (const w of state.resumeAtEnd) if (cluster.net.hosts.has(w)) cluster.net.resume(w);
}

export function scenarioPassed(r: ScenarioResult): boolean {
  return (
    r.identical &&
    r.duplicate_keys === 0 &&
    r.missing_keys === 0 &&
    r.writes_after_completion === 0 &&
    r.unexplained_retried_lines === 0 &&
    r.unretried_steps.length === 0
  );
}
