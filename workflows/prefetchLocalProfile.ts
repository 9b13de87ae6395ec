import {
  condition,
  continueAsNew,
  executeChild,
  getExternalWorkflowHandle,
  log,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PivotActivities } from '../activities';
import {
  chunksFinishedSignal,
  prefetchProgressQuery,
  runCandidatesSignal,
  segmentProfiledSignal,
} from '../contracts/temporal';
import type {
  PrefetchAlignment,
  PrefetchInput,
  PrefetchResult,
  PrefetchSegment,
  PrefetchState,
} from '../contracts/payloads';
import { collectStageActivityOptions } from './activityOptions';
import { collectRolloutsWorkflow } from './collectRollouts';
import { earlySegmentWorkflow } from './earlySegment';

// Overlap (docs/architecture.md): local profiling that starts while collect runs. Collect signals
// how far its chunks have all finished; each time, the finished rows not cut yet become a segment
// (activities/early/prefetch.ts says where one ends), converted on its own and profiled by a chunked
// child on the policy engine (workflows/earlySegment.ts). Nothing here decides what is published:
// the run's convert and local profile still run over the whole run in its order, reusing a sample
// from here only for the very same request (activities/early/prefetched.ts).

const { prefetchSegment, alignPrefetched, alignPending } =
  proxyActivities<PivotActivities>(collectStageActivityOptions);

/** A segment being profiled: its files, and its child's end (which never rejects). */
interface Profiling {
  dir: string;
  candidatesPath: string;
  done: Promise<void>;
}

/**
 * Segments profiled at once: two, so one's tail (its last chunks and merge) overlaps the
 * next one's chunks and the policy engine is not left idle between segments.
 */
const SEGMENTS_IN_FLIGHT = 2;
const DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS = 4000;
/** Each profiled segment is reported to the run, which waits on early profiling only while it progresses. */
const REPORT_SEGMENTS = 'report-segments-to-run';
/** A segment is profiled by earlySegmentWorkflow: no finish, whose outputs nothing reads. */
const SEGMENT_WITHOUT_FINISH = 'early-segment-without-finish';

const INITIAL_STATE: PrefetchState = {
  fromRow: 0,
  finishedChunks: 0,
  collectDone: false,
  segments: [],
  counts: { segments: 0, candidates: 0, samples: 0 },
};

export async function prefetchLocalProfileWorkflow(input: PrefetchInput): Promise<PrefetchResult> {
  const state = JSON.parse(JSON.stringify(input.resume ?? INITIAL_STATE)) as PrefetchState;
  const running = new Map<string, Profiling>();
  let cutUpTo = 0;
  let cutFinal = false;
  setHandler(chunksFinishedSignal, ({ chunks, final }) => {
    state.finishedChunks = Math.max(state.finishedChunks, chunks);
    if (final) state.collectDone = true;
  });
  setHandler(runCandidatesSignal, (signalled) => {
    state.runTarget = signalled;
  });
  setHandler(prefetchProgressQuery, () => ({
    ...state.counts,
    running: [...running.keys()],
    collectChunksFinished: state.finishedChunks,
  }));

  const historyLimit = input.continueAsNewAfterEvents ?? DEFAULT_CONTINUE_AS_NEW_AFTER_EVENTS;
  const mustContinueAsNew = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= historyLimit;
  const canCut = () => running.size < SEGMENTS_IN_FLIGHT && (state.finishedChunks > cutUpTo || state.collectDone);

  while (!cutFinal) {
    await condition(() => (mustContinueAsNew() ? running.size === 0 : canCut()));
    if (mustContinueAsNew()) await continueAsNew<typeof prefetchLocalProfileWorkflow>({ ...input, resume: state });
    const final = state.collectDone;
    cutUpTo = state.finishedChunks;
    const segment = await prefetchSegment({
      plan: input.plan,
      collectPrefix: input.collectPrefix,
      fromRow: state.fromRow,
      finishedChunks: cutUpTo,
      final,
    });
    state.fromRow = segment.toRow;
    cutFinal = final;
    const { dir, candidatesPath } = segment;
    if (dir && candidatesPath) startSegment(input, state, running, { ...segment, dir, candidatesPath });
  }
  const aligned = input.alignForRun ? await fileForRun(input, state, running) : undefined;
  await Promise.all([...running.values()].map((p) => p.done));
  return { ...state.counts, segmentDirs: inRowOrder(state.segments), ...(aligned ? { aligned } : {}) };
}

/**
 * Files the early samples for the run's local profile once the run has its candidates. The first
 * pass takes the segments done and only sets aside the rows of those still profiling, so it runs
 * while the policy engine finishes them; the second, over just those rows, is what is left after
 * the engine's last request.
 */
async function fileForRun(
  input: PrefetchInput,
  state: PrefetchState,
  running: ReadonlyMap<string, Profiling>,
): Promise<PrefetchAlignment> {
  await condition(() => state.runTarget !== undefined);
  const { candidatesPath, outPrefix } = state.runTarget!;
  const still = [...running.values()];
  const first = await alignPrefetched({
    plan: input.plan,
    candidatesPath,
    outPrefix,
    segments: inRowOrder(state.segments),
    pending: still.map((s) => s.candidatesPath),
  });
  const { reused, rows, wholeChunks } = first;
  if (!first.pending) return { reused, rows, wholeChunks };
  await Promise.all(still.map((s) => s.done));
  // A segment whose profiling failed is not in state.segments: its rows are sampled live.
  const profiled = still.map((s) => s.dir).filter((dir) => state.segments.includes(dir));
  const tail = await alignPending({ plan: input.plan, outPrefix, segments: inRowOrder(profiled), wholeChunks });
  return { reused: reused + tail.reused, rows, wholeChunks: tail.wholeChunks };
}

/** Segments finish in any order; the run reads them in row order. */
function inRowOrder(dirs: readonly string[]): string[] {
  return [...dirs].sort((a, b) => fromRow(a) - fromRow(b));
}

/** A segment directory's first row (`rows-<from>-<to>`). */
function fromRow(dir: string): number {
  return Number(/rows-(\d+)-\d+$/.exec(dir)?.[1] ?? 0);
}

/** Profiles a segment's candidates in a chunked child; a failed segment is only sampled later, live. */
function startSegment(
  input: PrefetchInput,
  state: PrefetchState,
  running: Map<string, Profiling>,
  segment: PrefetchSegment & { dir: string; candidatesPath: string },
): void {
  const workflowId = `${workflowInfo().workflowId}/${segment.dir.slice(segment.dir.lastIndexOf('/') + 1)}`;
  state.counts.segments++;
  state.counts.candidates += segment.candidates;
  const args = [
    {
      // The segment is its own little run directory: its manifest and digests stay out of the run's.
      plan: { ...input.plan, runDir: segment.dir, early: true },
      stage: 'local_profile' as const,
      inputPath: segment.candidatesPath,
      outPrefix: `${segment.dir}/local_profile`,
    },
  ] as const;
  // Segments started before a segment had a workflow of its own ran a whole stage, finish included.
  const child = patched(SEGMENT_WITHOUT_FINISH)
    ? executeChild(earlySegmentWorkflow, { workflowId, args })
    : executeChild(collectRolloutsWorkflow, { workflowId, args });
  const profiled = child.then(
    (result) => {
      state.counts.samples += result.merge.completed;
      state.segments.push(segment.dir);
      reportToRun();
    },
    (err: unknown) => log.warn('early local profiling of a segment failed', { workflowId, error: String(err) }),
  );
  running.set(workflowId, {
    dir: segment.dir,
    candidatesPath: segment.candidatesPath,
    done: profiled.finally(() => running.delete(workflowId)),
  });
}

/** Tells the run one more segment was profiled; a run that cannot take it (it ended) changes nothing. */
function reportToRun(): void {
  const run = workflowInfo().parent?.workflowId;
  if (!run || !patched(REPORT_SEGMENTS)) return;
  getExternalWorkflowHandle(run)
    .signal(segmentProfiledSignal)
    .catch((err: unknown) => log.warn('the run did not take a profiled segment', { error: String(err) }));
}
