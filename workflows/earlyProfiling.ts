import {
  CancellationScope,
  type ChildWorkflowHandle,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import { runCandidatesSignal, segmentProfiledSignal } from '../contracts/temporal';
import type { PrefetchCounts, PrefetchResult, RunPlan } from '../contracts/payloads';
import { stageActivityOptions } from './activityOptions';
import { prefetchLocalProfileWorkflow } from './prefetchLocalProfile';

// The run's side of early profiling (`overlap: true`, docs/architecture.md): start it beside collect,
// hand it the run's candidates, take what it filed, and remove its files. It is an optimisation: its
// failure, cancellation, termination or stall never fails the run, whose local profile samples live
// whatever it did not file.

const { alignPrefetched, removeEarlyProfiling } = proxyActivities<PivotActivities>(stageActivityOptions);

const OVERLAP = 'overlap-prefetch';
const REMOVE_SEGMENTS_BESIDE = 'remove-segments-beside-local-profile';
const ALIGN_IN_PREFETCH = 'align-in-prefetch';
/** Early profiling's failure, cancellation or clean-up never fails the run, and leaves no files. */
const EARLY_NEVER_FAILS_RUN = 'early-never-fails-run';
const NO_EARLY_AFTER_LOCAL_PROFILE = 'no-early-after-local-profile';
/** The run waits on early profiling only while it profiles segments. */
const EARLY_WAIT_BOUNDED = 'early-wait-bounded';
const DROP_EARLY_AFTER_COLLECT_FAILED = 'drop-early-after-collect-failed';

/**
 * How long early profiling may go without profiling a segment while the run waits on it. A segment
 * holds the rows collect finished while the two before it were profiled, so it takes minutes; this
 * long without one means early profiling is stuck (a lost signal, a segment that cannot end), and the
 * run's own local profile is better off sampling live. One report per segment, not per chunk, keeps
 * the run's history (which never continues as new) small.
 */
const DEFAULT_STALL_S = 7200;

/** How long a run that stops after collect waits for early profiling to end once cancelled. */
const STOP_WAIT = '2 minutes';

export type EarlyCounts = PrefetchCounts & { reused: number };
export type EarlyProfiling = ChildWorkflowHandle<typeof prefetchLocalProfileWorkflow>;

/** What filing the early samples gives the run's local profile. */
export interface FiledSamples {
  counts: EarlyCounts;
  /** Chunks whose every row an early sample answers ([from, to) ranges). */
  wholeChunks?: Array<[number, number]>;
  /** The segments' removal, started beside the run's local profile. */
  segmentsRemoved: Promise<void>;
}

/**
 * Starts early profiling beside collect, unless the verifier is not the builtin one or a resume finds
 * the run's own local profile begun, whose shards hold those keys already. It reports each segment it
 * profiled to the run, which counts them as its progress.
 */
export async function startEarlyProfiling(plan: RunPlan, collectPrefix: string): Promise<EarlyProfiling | undefined> {
  const overlap =
    plan.config.overlap &&
    plan.config.local_profile.verifier === 'builtin' &&
    patched(OVERLAP) &&
    !(plan.localProfileBegun && patched(NO_EARLY_AFTER_LOCAL_PROFILE));
  if (!overlap) return undefined;
  const alignForRun = patched(ALIGN_IN_PREFETCH);
  return startChild(prefetchLocalProfileWorkflow, {
    workflowId: `${workflowInfo().workflowId}/prefetch`,
    args: [{ plan, collectPrefix, ...(alignForRun ? { alignForRun } : {}) }],
  });
}

/** Counts the segments early profiling reports profiled: set up before any report can arrive. */
export function followEarlyProgress(): () => number {
  let reports = 0;
  setHandler(segmentProfiledSignal, () => void reports++);
  return () => reports;
}

/**
 * Hands the run's candidates to early profiling, which files its samples for the run's local-profile
 * chunks (a run recorded before that files them here, once the segments are done), and drops the
 * segments: beside the run's local profile, which no longer reads them, so their removal is not one
 * more step before it. Early profiling only saves engine time: if it failed, the run samples what it
 * did not file live.
 */
export async function fileEarlySamples(
  plan: RunPlan,
  prefetch: EarlyProfiling,
  candidatesPath: string,
  progress: () => number,
): Promise<FiledSamples | undefined> {
  const alignForRun = patched(ALIGN_IN_PREFETCH);
  let early: PrefetchResult;
  try {
    if (alignForRun)
      await prefetch.signal(runCandidatesSignal, { candidatesPath, outPrefix: localProfilePrefix(plan) });
    early = patched(EARLY_WAIT_BOUNDED)
      ? await resultWhileProgressing(plan, prefetch, progress)
      : await prefetch.result();
  } catch (err) {
    // Only the run's own cancellation ends the run: an operator's cancel of early profiling alone
    // (`temporal workflow cancel -w <run>/prefetch`) is one more way for it to fail.
    if (isCancellation(err) && (!patched(EARLY_NEVER_FAILS_RUN) || CancellationScope.current().consideredCancelled))
      throw err;
    log.warn('early local profiling failed; what it did not file is sampled live', { error: String(err) });
    return undefined;
  }
  // Filed by early profiling itself when the run signalled its candidates (most of it while the
  // policy engine was still busy); here otherwise.
  const { reused, wholeChunks } =
    early.aligned ??
    (await alignPrefetched({ plan, candidatesPath, outPrefix: localProfilePrefix(plan), segments: early.segmentDirs }));
  const removal = removeEarlyProfiling({ runDir: plan.runDir, part: 'segments' });
  // Awaited after the local profile; a failure meanwhile must not surface as an unhandled rejection.
  removal.catch(() => undefined);
  if (!patched(REMOVE_SEGMENTS_BESIDE)) await removal;
  const counts = { segments: early.segments, candidates: early.candidates, samples: early.samples, reused };
  return { counts, wholeChunks, segmentsRemoved: removal };
}

/**
 * Early profiling's result, or, once it has gone `overlap_stall_s` without profiling a segment, its
 * cancellation and a failure: the run then goes on without it, and never waits on it for ever.
 */
async function resultWhileProgressing(
  plan: RunPlan,
  prefetch: EarlyProfiling,
  progress: () => number,
): Promise<PrefetchResult> {
  let settled = false;
  const result = prefetch.result();
  result.then(
    () => (settled = true),
    () => (settled = true),
  );
  const stallMs = (plan.config.overlap_stall_s ?? DEFAULT_STALL_S) * 1000;
  for (;;) {
    const seen = progress();
    if (!(await condition(() => settled || progress() !== seen, stallMs))) break;
    if (settled) return result;
  }
  await getExternalWorkflowHandle(prefetch.workflowId)
    .cancel()
    .catch(() => undefined);
  throw new Error(`early local profiling profiled no segment in ${stallMs / 1000} s; cancelled`);
}

/**
 * Removes early profiling's files once the run's local profile no longer needs them, whatever became
 * of early profiling (filed, failed, cancelled, terminated, or a run with no candidates): kept, its
 * rollout copies would double what the run leaves on disk. A removal that fails after its retries is
 * logged, never the run's failure: the dataset does not depend on it.
 */
export async function dropEarlyProfiling(plan: RunPlan, filed: FiledSamples | undefined): Promise<void> {
  if (!patched(EARLY_NEVER_FAILS_RUN)) {
    await filed?.segmentsRemoved;
    await removeEarlyProfiling({ runDir: plan.runDir, part: 'matched' });
    return;
  }
  const removals = [filed?.segmentsRemoved ?? removeEarlyProfiling({ runDir: plan.runDir, part: 'segments' })];
  removals.push(removeEarlyProfiling({ runDir: plan.runDir, part: 'matched' }));
  for (const removal of removals) {
    await removal.catch((err: unknown) => {
      if (isCancellation(err)) throw err;
      log.warn('early profiling files not removed; the run goes on', { error: String(err) });
    });
  }
}

/** A run with no candidates ends before its local profile: early profiling's files go first. */
export async function dropEarlyProfilingWithoutCandidates(plan: RunPlan): Promise<void> {
  if (patched(EARLY_NEVER_FAILS_RUN)) await dropEarlyProfiling(plan, undefined);
}

/**
 * A collect that stops the run (require_complete, health_check_stops_run, a bad input line) ends it
 * before its local profile too. Early profiling is stopped first, so none of its segments starts
 * after the removal; the run's own cancellation leaves the files to the resume it may precede.
 */
export async function dropEarlyProfilingAfterCollectFailed(
  plan: RunPlan,
  prefetch: EarlyProfiling,
  err: unknown,
): Promise<void> {
  if (isCancellation(err) || !patched(DROP_EARLY_AFTER_COLLECT_FAILED)) return;
  let ended = false;
  prefetch.result().then(
    () => (ended = true),
    () => (ended = true),
  );
  await getExternalWorkflowHandle(prefetch.workflowId)
    .cancel()
    .catch(() => undefined);
  // Bounded: an early profiling that does not end in time is fenced out by the removal all the same.
  if (!(await condition(() => ended, STOP_WAIT)))
    log.warn('early local profiling did not end after its cancel; its files are removed anyway');
  await dropEarlyProfiling(plan, undefined);
}

export function localProfilePrefix(plan: RunPlan): string {
  return `${plan.runDir}/local_profile`;
}
