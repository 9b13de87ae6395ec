import { readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { Context, heartbeat } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { convertToCandidates } from '../../gym/convert';
import { mkdirDurably, syncDir } from '../../gym/durable';
import { readJsonl } from '../../gym/jsonl';
import { StagedJsonlFile } from '../../gym/stagedJsonl';
import { pivotAgentName } from '../../contracts/stageSettings';
import type { PrefetchSegment, RunPlan } from '../../contracts/payloads';
import { readMaterializedMeta, type MaterializedMeta } from '../chunk/chunkIndex';
import { finishedRollouts } from '../stage/merge';
import type { Fence } from '../chunk/fence';
import { claimEarlyFence, fenceOutEarly } from './earlyFence';
import { pauseAt } from '../run/testHooks';
import { prefetchedDir } from './filedChunks';
import { readRowIndex } from '../stage/rowIndex';

// Overlap (docs/architecture.md): while collect runs, the rows whose chunks have all finished are
// cut into a segment (at whole tasks with require_mixed) and converted on their own, so their
// candidates can be profiled early. Nothing here is published: the run's own convert still reads the whole of rollouts.jsonl,
// and its local profile only reuses what an early sample answered for the very same request.

/** Where a run keeps its early local profiling; never published, never compared. */
export const PREFETCH_DIR = 'prefetch';

/** Retries of a removal that the file system answers with EBUSY, ENOTEMPTY or EPERM, 0.2 s apart more each. */
const REMOVE_RETRIES = 8;
const REMOVE_RETRY_DELAY_MS = 200;

/** Lines a segment's copy writes between heartbeats (and looks for a cancellation). */
const HEARTBEAT_LINES = 10_000;

/** Row index records read at once while walking back over a task's rows. */
const WALK_ROWS = 256;

async function tasksOf(outPrefix: string, meta: MaterializedMeta, from: number, to: number): Promise<number[]> {
  const tasks: number[] = [];
  for await (const r of readRowIndex(outPrefix, meta.agentNames ?? [], from, to)) tasks.push(r.task);
  return tasks;
}

/**
 * The first row of the run of rows that ends at `row` and belongs to row `row`'s task, but not before
 * `floor`. Rows are task-major (abc → aabbcc), so that run is where the task begins; a task repeated
 * elsewhere in the file is only cut apart, never wrongly, since nothing early is trusted.
 */
async function taskStart(outPrefix: string, meta: MaterializedMeta, row: number, floor: number): Promise<number> {
  const [task] = await tasksOf(outPrefix, meta, row, row + 1);
  let start = row;
  while (start > floor) {
    const from = Math.max(floor, start - WALK_ROWS);
    const tasks = await tasksOf(outPrefix, meta, from, start);
    let i = tasks.length;
    while (i > 0 && tasks[i - 1] === task) i--;
    start = from + i;
    if (i > 0) break;
  }
  return start;
}

/** `task:rollout` of rows [from, to). */
async function rowKeys(outPrefix: string, meta: MaterializedMeta, from: number, to: number): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const r of readRowIndex(outPrefix, meta.agentNames ?? [], from, to)) keys.add(`${r.task}:${r.rollout}`);
  return keys;
}

/**
 * Drops the candidates of the given source rollouts. A segment that starts inside a task converts the
 * task's earlier rollouts again so that its duplicates of their pivots are dropped as the run's convert
 * drops them; their own candidates were profiled by the segment before.
 */
async function dropCandidatesOf(candidatesPath: string, keys: ReadonlySet<string>): Promise<number> {
  const out = new StagedJsonlFile(candidatesPath);
  let kept = 0;
  try {
    for await (const { value, text } of readJsonl(candidatesPath)) {
      const provenance = (value as { provenance?: { task_index?: number; rollout_index?: number } }).provenance;
      if (keys.has(`${provenance?.task_index}:${provenance?.rollout_index}`)) continue;
      await out.writeLine(`${text}\n`);
      kept++;
    }
    await out.commit();
  } finally {
    await out.abort();
  }
  return kept;
}

/**
 * Whether the source preference keeps a task's trajectories depends only on the task's own group;
 * `prefer_mixed` only orders them, so a segment keeps all of them in row order ("off") and the run's
 * convert puts them in its order later.
 */
function segmentPreference(plan: RunPlan): 'require_mixed' | 'off' {
  return plan.config.convert.source_preference === 'require_mixed' ? 'require_mixed' : 'off';
}

/**
 * Where a segment ends, below `limit` (the first row whose chunk has not finished). `require_mixed`
 * keeps a task's trajectories only when its whole group is mixed, so the segment ends at its last
 * whole task. Otherwise each rollout converts on its own (its decision points, its reward against
 * min_source_reward), so the segment takes every finished row, and a task's rollouts reach the policy
 * engine as they finish rather than with the task's last one.
 */
async function segmentEnd(plan: RunPlan, collectPrefix: string, meta: MaterializedMeta, from: number, limit: number) {
  if (limit >= meta.rows) return meta.rows;
  // The end of the last whole task: where the task of the first unfinished row begins.
  return segmentPreference(plan) === 'require_mixed' ? taskStart(collectPrefix, meta, limit, from) : limit;
}

/**
 * Cuts the finished collect rows from `fromRow` on (see segmentEnd) into a segment and converts its
 * positive trajectories into candidates. With `final`, every chunk has finished and the segment runs
 * to the last row. A segment without candidates is not profiled: it returns no directory.
 */
export async function prefetchSegment(input: {
  plan: RunPlan;
  collectPrefix: string;
  fromRow: number;
  finishedChunks: number;
  final: boolean;
}): Promise<PrefetchSegment> {
  const { plan, collectPrefix, fromRow } = input;
  const meta = await readMaterializedMeta(collectPrefix);
  // A materialization without a row index (older runs) cannot be cut by task: nothing early.
  if (!meta?.agentNames) return { toRow: fromRow, candidates: 0 };
  const limit = Math.min(meta.rows, input.finishedChunks * meta.chunkSize);
  const toRow = input.final ? meta.rows : await segmentEnd(plan, collectPrefix, meta, fromRow, limit);
  if (toRow <= fromRow) return { toRow: fromRow, candidates: 0 };

  const dir = path.join(plan.runDir, PREFETCH_DIR, `rows-${fromRow}-${toRow}`);
  // Built under this attempt's own name and moved into place once whole, right after a look at the
  // fence, like every writer: an older attempt still running (a paused or partitioned worker) writes
  // only into its own directory, and one that wakes after the run removed early profiling's files
  // leaves nothing at all.
  const fence = await claimEarlyFence(path.join(plan.runDir, 'local_profile'), `early segment ${dir}`);
  const staging = `${dir}.${fence.token.name}.tmp`;
  try {
    await mkdirDurably(staging);
    await fence.checkClaimed([staging]);
    const built = await buildSegment({ plan, collectPrefix, meta, fromRow, toRow }, dir, staging, fence);
    await pauseAt('segment.built', fence.token.name);
    if (built.candidates === 0) {
      await rm(staging, { recursive: true, force: true });
      await fence.check();
      return { toRow, candidates: 0 };
    }
    // Moved into the segment's directory file by file: one a resumed run built before keeps its
    // profile's shards (its files are these very bytes: the same finished rows, converted alike).
    const moves = (await readdir(staging)).map((name) => [path.join(staging, name), path.join(dir, name)] as const);
    await mkdirDurably(dir);
    await fence.publish(moves);
    await rm(staging, { recursive: true, force: true });
    const candidatesPath = path.join(dir, path.basename(built.candidatesPath));
    return { toRow, dir, candidatesPath, candidates: built.candidates };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    // A late attempt leaves no empty directory it made either; those that hold files stay.
    for (const made of [dir, path.dirname(dir)]) await rmdir(made).catch(() => undefined);
    throw await fence.explain(err);
  }
}

interface SegmentRows {
  plan: RunPlan;
  collectPrefix: string;
  meta: MaterializedMeta;
  fromRow: number;
  toRow: number;
}

/**
 * Copies the segment's finished rollouts into `outDir` and converts them there, as if in `dir`. Heartbeats from the
 * first line, so a cancellation reaches the copy, and looks at the fence before writing.
 */
async function buildSegment(segment: SegmentRows, dir: string, outDir: string, fence: Fence) {
  const { plan, collectPrefix, meta, fromRow, toRow } = segment;
  const ctx = Context.current();
  const rolloutsPath = path.join(outDir, 'rollouts.jsonl');
  // Only without require_mixed can a segment start inside a task (segmentEnd).
  const openFrom = segmentPreference(plan) === 'off' ? await taskStart(collectPrefix, meta, fromRow, 0) : fromRow;
  const out = new StagedJsonlFile(rolloutsPath);
  try {
    let lines = 0;
    for await (const line of finishedRollouts(collectPrefix, meta, openFrom, toRow)) {
      if (lines++ % HEARTBEAT_LINES === 0) {
        ctx.heartbeat({ lines });
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('early segment cancelled');
      }
      await fence.beforeWrite();
      await out.writeLine(`${line}\n`);
    }
    await out.commit();
  } finally {
    await out.abort();
  }
  const summary = await convertToCandidates({
    inputs: [rolloutsPath],
    outDir,
    // Named where it ends up: every attempt's candidates are then the same bytes.
    sourceName: () => path.relative(plan.runDir, path.join(dir, 'rollouts.jsonl')),
    agent_name: pivotAgentName(plan),
    source_format: 'gym_rollouts',
    ...plan.config.convert,
    source_preference: segmentPreference(plan),
  });
  const candidates =
    openFrom < fromRow
      ? await dropCandidatesOf(summary.candidatesPath, await rowKeys(collectPrefix, meta, openFrom, fromRow))
      : summary.counts.candidates;
  return { candidatesPath: summary.candidatesPath, candidates };
}

/**
 * Early profiling's files once the run has what it needs from them: the segments once their samples
 * are filed for the run's chunks, those files once the run's local profile is done. Kept, they would
 * double what local profiling leaves on disk. Gone, a rerun of the run id only samples live.
 */
export async function removeEarlyProfiling(input: { runDir: string; part: 'segments' | 'matched' }): Promise<void> {
  const outPrefix = path.join(input.runDir, 'local_profile');
  await fenceOutEarly(outPrefix);
  const target = input.part === 'segments' ? path.join(input.runDir, PREFETCH_DIR) : prefetchedDir(outPrefix);
  // A filing that crashed leaves its staging directory (`<target>.<pid>-<hex>.tmp`) beside it.
  const parent = path.dirname(target);
  const staged = (await readdir(parent).catch(() => [] as string[]))
    .filter((name) => name.startsWith(`${path.basename(target)}.`) && name.endsWith('.tmp'))
    .map((name) => path.join(parent, name));
  for (const dir of [target, ...staged]) {
    heartbeat();
    // NFS answers EBUSY or ENOTEMPTY while a file in the tree is still open somewhere: retried here
    // with a backoff before the activity's own retries.
    await rm(dir, { recursive: true, force: true, maxRetries: REMOVE_RETRIES, retryDelay: REMOVE_RETRY_DELAY_MS });
  }
  // The removal is durable before it is reported: a power cut cannot bring the files back.
  await syncDir(parent).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  });
}
