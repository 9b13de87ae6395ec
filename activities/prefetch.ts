import { rm } from 'node:fs/promises';
import path from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { convertToCandidates } from '../gym/convert';
import { mkdirDurably } from '../gym/durable';
import { StagedJsonlFile } from '../gym/stagedJsonl';
import { pivotAgentName } from '../contracts/stageSettings';
import type { PrefetchSegment, RunPlan } from '../contracts/payloads';
import { readMaterializedMeta, type MaterializedMeta } from './chunkIndex';
import { finishedRollouts } from './merge';
import { prefetchedDir } from './prefetched';
import { readRowIndex } from './rowIndex';

// Overlap (docs/architecture.md): while collect runs, the rows of tasks whose chunks have all
// finished are cut into a segment and converted on their own, so their candidates can be profiled
// early. Nothing here is published: the run's own convert still reads the whole of rollouts.jsonl,
// and its local profile only reuses what an early sample answered for the very same request.

/** Where a run keeps its early local profiling; never published, never compared. */
export const PREFETCH_DIR = 'prefetch';

/**
 * The end of the last whole task before `limit`: the row where the task of row `limit` (the first
 * row whose chunk has not finished) begins, or `limit` when that task begins there. Rows are
 * task-major (abc → aabbcc), so a task's rows before `limit` are a run at its end; a task repeated
 * elsewhere in the file is only profiled late, never wrongly, since nothing early is trusted.
 */
async function lastWholeTaskEnd(outPrefix: string, meta: MaterializedMeta, from: number, limit: number) {
  const agentNames = meta.agentNames ?? [];
  let open: number | undefined;
  for await (const row of readRowIndex(outPrefix, agentNames, limit, limit + 1)) open = row.task;
  let end = limit;
  let row = limit - 1;
  // Walk back over the open task's rows (at most num_repeats of them).
  for (; row >= from; row--) {
    let task: number | undefined;
    for await (const r of readRowIndex(outPrefix, agentNames, row, row + 1)) task = r.task;
    if (task !== open) break;
    end = row;
  }
  return end;
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
 * Cuts collect rows [fromRow, end of the last whole task among the finished chunks) into a segment
 * and converts its positive trajectories into candidates. With `final`, every chunk has finished and
 * the segment runs to the last row.
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
  const toRow =
    input.final || limit >= meta.rows ? meta.rows : await lastWholeTaskEnd(collectPrefix, meta, fromRow, limit);
  if (toRow <= fromRow) return { toRow: fromRow, candidates: 0 };

  const dir = path.join(plan.runDir, PREFETCH_DIR, `rows-${fromRow}-${toRow}`);
  await mkdirDurably(dir);
  const rolloutsPath = path.join(dir, 'rollouts.jsonl');
  const out = new StagedJsonlFile(rolloutsPath);
  try {
    let lines = 0;
    for await (const line of finishedRollouts(collectPrefix, meta, fromRow, toRow)) {
      await out.writeLine(`${line}\n`);
      if (++lines % 10_000 === 0) heartbeat({ lines });
    }
    await out.commit();
  } finally {
    await out.abort();
  }
  const summary = await convertToCandidates({
    inputs: [rolloutsPath],
    outDir: dir,
    sourceRoot: plan.runDir,
    agent_name: pivotAgentName(plan),
    source_format: 'gym_rollouts',
    ...plan.config.convert,
    source_preference: segmentPreference(plan),
  });
  return { toRow, dir, candidatesPath: summary.candidatesPath, candidates: summary.counts.candidates };
}

/**
 * Early profiling's files once the run has what it needs from them: the segments once their samples
 * are filed for the run's chunks, those files once the run's local profile is done. Kept, they would
 * double what local profiling leaves on disk. Gone, a rerun of the run id only samples live.
 */
export async function removeEarlyProfiling(input: { runDir: string; part: 'segments' | 'matched' }): Promise<void> {
  const target =
    input.part === 'segments'
      ? path.join(input.runDir, PREFETCH_DIR)
      : prefetchedDir(path.join(input.runDir, 'local_profile'));
  await rm(target, { recursive: true, force: true });
}
