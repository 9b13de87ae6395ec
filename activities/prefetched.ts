import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { jsonText, readJsonl, readLines } from '../gym/jsonl';
import { dictGet, parseKinded, pickEntries, withEntries, type JsonDict } from '../gym/kindedJson';
import { materializeRecords } from '../gym/materialize';
import { mkdirDurably, renameDurably } from '../gym/durable';
import { StagedJsonlFile } from '../gym/stagedJsonl';
import { stageSettings } from '../contracts/stageSettings';
import type { RunPlan } from '../contracts/payloads';
import { SINGLE_STEP_VERDICT_KEYS } from './executors/singleStep';
import { keyedResult, type RolloutExecutor } from './executors/types';
import { stageMaterializeOptions } from './materialize';
import { shardLine } from './shardLines';

// Overlap, second half (docs/architecture.md): the run's own local profile reuses an early sample
// only for the very same engine request. A builtin sample's verdict is a function of the request
// (the candidate's prefix and tools, with the sample's seed) and the expected action, and of nothing
// that depends on when or in which segment it was asked; the line written around it is the run's own
// materialized row. So a reused sample gives the bytes a live call gives, and a candidate the early
// profiling missed or saw differently is simply sampled live.

/** A local-profile sample: where it sits among the run's candidates, and what decides its verdict. */
interface Sample {
  /** Source task, source rollout, decision point, sample index: the order the run's convert writes. */
  key: readonly number[];
  /** The engine request's parameters and the expected action, as the row's bytes give them. */
  request: string;
}

function sampleOf(value: JsonDict, row: Record<string, unknown>): Sample | undefined {
  const provenance = row.provenance as Record<string, unknown> | undefined;
  const key = [provenance?.task_index, provenance?.rollout_index, provenance?.pivot_index, row._ng_rollout_index];
  if (!key.every((k): k is number => typeof k === 'number')) return undefined;
  const request = `${jsonText(dictGet(value, 'responses_create_params'))}\n${jsonText(dictGet(value, 'expected_action'))}`;
  return { key, request };
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

async function* earlySamples(files: readonly string[]): AsyncGenerator<Sample & { text: string }> {
  for (const file of files) {
    try {
      for await (const { value, text } of readJsonl(file)) {
        const sample = sampleOf(parseKinded(text).kinded as JsonDict, value as Record<string, unknown>);
        if (sample) yield { ...sample, text };
      }
    } catch (err) {
      // A segment whose profiling failed left no file: its candidates are sampled live.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/**
 * The early samples in segment order, which is key order. The run's candidates come in key order
 * within each source-preference tier, so the run's walk starts the cursor over once per tier.
 */
class EarlySamples {
  private samples: AsyncGenerator<Sample & { text: string }> | undefined;
  current: (Sample & { text: string }) | undefined;

  constructor(private readonly files: readonly string[]) {}

  async restart(): Promise<void> {
    await this.samples?.return(undefined);
    this.samples = earlySamples(this.files);
    await this.advance();
  }

  async advance(): Promise<void> {
    const next = await this.samples!.next();
    this.current = next.done ? undefined : next.value;
  }

  /** The early sample with this key and request, moving past the ones before it. */
  async match(sample: Sample): Promise<string | undefined> {
    while (this.current && compareKeys(this.current.key, sample.key) < 0) await this.advance();
    const found = this.current;
    if (!found || compareKeys(found.key, sample.key) !== 0 || found.request !== sample.request) return undefined;
    await this.advance();
    return found.text;
  }
}

/** Two tiers, and a margin: past this the order is not the convert's, and the rest is sampled live. */
const MAX_RESTARTS = 4;

export function prefetchedDir(outPrefix: string): string {
  return `${outPrefix}_prefetched`;
}

function chunkFileName(chunk: number): string {
  return `chunk-${String(chunk).padStart(6, '0')}.jsonl`;
}

/**
 * Walks the run's local-profile rows (materialized from candidates.jsonl as the stage will) beside
 * the early samples, and writes each match into the file of the chunk that will run its row, keyed
 * by the row's own indices. Rewritten whole on every attempt.
 */
export async function alignPrefetched(input: {
  plan: RunPlan;
  candidatesPath: string;
  outPrefix: string;
  segments: readonly string[];
}): Promise<{ reused: number; rows: number }> {
  const { plan, candidatesPath, outPrefix } = input;
  const settings = stageSettings(plan, 'local_profile');
  // Written under a name of this attempt's own and renamed into place whole: an older attempt still
  // running (a partitioned worker) writes only into its own directory.
  const dir = prefetchedDir(outPrefix);
  const staging = `${dir}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  await mkdirDurably(staging);
  const early = new EarlySamples(input.segments.map((segment) => path.join(segment, 'local_profile.jsonl')));
  await early.restart();
  let previous: readonly number[] | undefined;
  let restarts = 0;
  let rows = 0;
  let reused = 0;
  let out: { chunk: number; file: StagedJsonlFile } | undefined;
  try {
    const records = materializeRecords(readJsonl(candidatesPath), stageMaterializeOptions(settings), candidatesPath);
    for await (const { row, value } of records) {
      const sample = sampleOf(value, row);
      if (sample && previous && compareKeys(sample.key, previous) < 0 && ++restarts <= MAX_RESTARTS)
        await early.restart();
      previous = sample?.key ?? previous;
      const text = sample && restarts <= MAX_RESTARTS ? await early.match(sample) : undefined;
      if (text !== undefined) {
        const chunk = Math.floor(rows / settings.chunkSize);
        if (out?.chunk !== chunk) {
          await out?.file.commit();
          out = { chunk, file: new StagedJsonlFile(path.join(staging, chunkFileName(chunk))) };
        }
        await out.file.writeLine(`${row._ng_task_index}:${row._ng_rollout_index}\t${text}\n`);
        reused++;
      }
      if (++rows % 10_000 === 0) heartbeat({ rows });
    }
    await out?.file.commit();
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    throw err;
  } finally {
    await out?.file.abort();
  }
  await rm(dir, { recursive: true, force: true });
  await renameDurably([[staging, dir]]);
  return { reused, rows };
}

/** The early samples matched to a chunk's rows, by `task:rollout`; none when there is no file. */
export async function readPrefetched(outPrefix: string, chunk: number): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  try {
    for await (const { text, terminated } of readLines(path.join(prefetchedDir(outPrefix), chunkFileName(chunk)))) {
      const cut = text.indexOf('\t');
      // Only whole lines: a row without one is sampled live, which is never wrong.
      if (cut > 0 && terminated) found.set(text.slice(0, cut), text.slice(cut + 1));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return found;
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
      const verdict = pickEntries(parseKinded(text).kinded as JsonDict, SINGLE_STEP_VERDICT_KEYS);
      return shardLine(keyedResult(input, withEntries(input.value, verdict)));
    },
  };
}
