import path from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { readJsonl, readLines } from '../../gym/jsonl';
import { splicedVerdict } from '../../gym/rolloutSplice';
import { dictGet, parseKinded, pickEntries, withEntries, type JsonDict } from '../../gym/kindedJson';
import { materializeRecords } from '../../gym/materialize';
import { StagedJsonlFile } from '../../gym/stagedJsonl';
import { stageMaterializeOptions, stageSettings } from '../../contracts/stageSettings';
import type { PrefetchAlignment, RunPlan } from '../../contracts/payloads';
import { SINGLE_STEP_VERDICT_KEYS } from '../chunk/executors/singleStep';
import { keyedResult, type RolloutExecutor } from '../chunk/executors/types';
import { EarlySamples, SampleLine } from './earlySamples';
import {
  FiledChunks,
  filing,
  prefetchedDir,
  readPrefetched,
  TAIL_DIR,
  WholeChunks,
  withoutChunks,
  type RunRow,
} from './filedChunks';
import type { ExecutorWrapper } from '../chunk/chunk';
import { shardLine, splicedShardLine } from '../chunk/shardLines';

// Overlap, second half (docs/architecture.md): the run's own local profile reuses an early sample
// only for the very same engine request. A builtin sample's verdict is a function of the request
// (the candidate's prefix and tools, with the sample's seed) and the expected action, and of nothing
// that depends on when or in which segment it was asked; the line written around it is the run's own
// materialized row. So a reused sample gives the bytes a live call gives, and a candidate the early
// profiling missed or saw differently is simply sampled live.

/** The first pass's rows left for the segments still profiling, with their lines. */
const PENDING_FILE = 'pending.jsonl';

function samplesFile(segmentDir: string): string {
  return path.join(segmentDir, 'local_profile.jsonl');
}

/**
 * Lines read between two heartbeats: every early-profiling activity beats from its first line on,
 * well inside the stage's 2-minute heartbeat timeout however large the run.
 */
const HEARTBEAT_ROWS = 10_000;

export type AlignResult = PrefetchAlignment & {
  /** Rows set aside for the segments still profiling (counted in wholeChunks as if answered). */
  pending?: number;
};

async function* runRows(plan: RunPlan, candidatesPath: string): AsyncGenerator<RunRow> {
  const options = stageMaterializeOptions(stageSettings(plan, 'local_profile'));
  let index = 0;
  for await (const { row, text } of materializeRecords(readJsonl(candidatesPath), options, candidatesPath)) {
    if (index % HEARTBEAT_ROWS === 0) heartbeat({ rows: index });
    yield { index: index++, id: `${row._ng_task_index}:${row._ng_rollout_index}`, text };
  }
}

/** The rows set aside for the segments still profiling, as the first pass wrote them. */
async function* pendingRows(file: string): AsyncGenerator<RunRow> {
  let rows = 0;
  for await (const { text, terminated } of readLines(file)) {
    if (rows++ % HEARTBEAT_ROWS === 0) heartbeat({ rows });
    const first = text.indexOf('\t');
    const second = text.indexOf('\t', first + 1);
    if (!terminated || first < 0 || second < 0) throw new Error(`${file}: a pending row cut short`);
    yield { index: Number(text.slice(0, first)), id: text.slice(first + 1, second), text: text.slice(second + 1) };
  }
}

/** `task:rollout` of the source rollout a sample was cut from. */
function sourceOf(key: readonly number[]): string {
  return `${key[0]}:${key[1]}`;
}

/** The source rollouts of candidates files (of the segments still profiling). */
async function sourcesOf(candidatesPaths: readonly string[]): Promise<Set<string>> {
  const sources = new Set<string>();
  for (const file of candidatesPaths) {
    for await (const { value } of readJsonl(file)) {
      if (sources.size % HEARTBEAT_ROWS === 0) heartbeat({ sources: sources.size });
      const provenance = dictGet(value as JsonDict, 'provenance') as Record<string, unknown> | undefined;
      sources.add(`${String(provenance?.task_index)}:${String(provenance?.rollout_index)}`);
    }
  }
  return sources;
}

/**
 * Walks the run's local-profile rows (materialized from candidates.jsonl as the stage will) beside
 * the early samples, and writes each match into the file of the chunk that will run its row, keyed
 * by the row's own indices. Rewritten whole on every attempt.
 *
 * `pending` names the candidates of segments still profiling: their rows are only set aside (with
 * their lines) for alignPending, so this pass can run while the policy engine finishes them.
 */
export async function alignPrefetched(input: {
  plan: RunPlan;
  candidatesPath: string;
  outPrefix: string;
  segments: readonly string[];
  pending?: readonly string[];
}): Promise<AlignResult> {
  const { plan, candidatesPath, outPrefix } = input;
  heartbeat({ rows: 0 });
  const pending = await sourcesOf(input.pending ?? []);
  const filed = new FiledChunks(prefetchedDir(outPrefix), stageSettings(plan, 'local_profile').chunkSize);
  const early = new EarlySamples(input.segments.map(samplesFile));
  const whole = new WholeChunks(stageSettings(plan, 'local_profile').chunkSize);
  return filing(outPrefix, filed, async () => {
    const aside = pending.size > 0 ? new StagedJsonlFile(path.join(filed.staging, PENDING_FILE)) : undefined;
    let reused = 0;
    let setAside = 0;
    try {
      await early.open();
      for await (const row of runRows(plan, candidatesPath)) {
        const sample = SampleLine.read(row.text);
        const inOrder = await early.follow(sample?.key);
        if (aside && sample && inOrder && pending.has(sourceOf(sample.key))) {
          await aside.writeLine(`${row.index}\t${row.id}\t${row.text}\n`);
          setAside++;
          whole.add(row.index, true);
          continue;
        }
        const verdict = sample && inOrder ? await early.match(sample) : undefined;
        if (verdict !== undefined) {
          await filed.file(row, verdict);
          reused++;
        }
        whole.add(row.index, verdict !== undefined);
      }
      await aside?.commit();
    } finally {
      await aside?.abort();
      await early.close();
    }
    return { reused, rows: whole.total, wholeChunks: whole.finish(), ...(aside ? { pending: setAside } : {}) };
  });
}

/**
 * The second pass, once the segments still profiling in the first have finished: matches the rows
 * the first pass set aside against those segments' samples, filing them beside the first pass's
 * (`tail/`), and drops from `wholeChunks` every chunk with a set-aside row left unanswered.
 */
export async function alignPending(input: {
  plan: RunPlan;
  outPrefix: string;
  segments: readonly string[];
  wholeChunks: Array<[number, number]>;
}): Promise<Pick<PrefetchAlignment, 'reused' | 'wholeChunks'>> {
  const chunkSize = stageSettings(input.plan, 'local_profile').chunkSize;
  const dir = prefetchedDir(input.outPrefix);
  const filed = new FiledChunks(path.join(dir, TAIL_DIR), chunkSize);
  const early = new EarlySamples(input.segments.map(samplesFile));
  return filing(input.outPrefix, filed, async () => {
    let reused = 0;
    const unanswered = new Set<number>();
    heartbeat({ rows: 0 });
    await early.open();
    try {
      for await (const row of pendingRows(path.join(dir, PENDING_FILE))) {
        const sample = SampleLine.read(row.text);
        const inOrder = await early.follow(sample?.key);
        const verdict = sample && inOrder ? await early.match(sample) : undefined;
        if (verdict === undefined) {
          unanswered.add(Math.floor(row.index / chunkSize));
          continue;
        }
        await filed.file(row, verdict);
        reused++;
      }
    } finally {
      await early.close();
    }
    return { reused, wholeChunks: withoutChunks(input.wholeChunks, unanswered) };
  });
}

/** The executor, but a row with an early sample gets that sample's verdict on its own line instead of a call. */
export function withPrefetched(
  executor: RolloutExecutor,
  prefetched: Map<string, string>,
  onReused: () => void = () => undefined,
): RolloutExecutor {
  if (prefetched.size === 0) return executor;
  return {
    async run(input, signal) {
      const text = prefetched.get(`${input.task}:${input.rollout}`);
      if (text === undefined) return executor.run(input, signal);
      onReused();
      // Spliced from the row's line when both are in orjson's form: no decoding of the row's prompt.
      const spliced = splicedVerdict(input.text, text, SINGLE_STEP_VERDICT_KEYS);
      if (spliced) return splicedShardLine(spliced.digest, spliced.line);
      const verdict = pickEntries(parseKinded(text).kinded as JsonDict, SINGLE_STEP_VERDICT_KEYS);
      return shardLine(keyedResult(input, withEntries(input.value, verdict)));
    },
  };
}

/** The run's local-profile chunks answer from the samples filed for them (chunk/chunk.ts's wrapper). */
export const withEarlySamples: ExecutorWrapper = async (executor, input, onReused) =>
  withPrefetched(executor, await readPrefetched(input.outPrefix, input.chunkIndex), onReused);
