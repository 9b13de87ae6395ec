import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { heartbeat } from '@temporalio/activity';
import { jsonText, readJsonl, readLines } from '../gym/jsonl';
import { orjsonCanonicalObject, type CanonicalEntry } from '../gym/orjsonCanonical';
import { splicedVerdict } from '../gym/rolloutSplice';
import { dictGet, parseKinded, pickEntries, withEntries, type JsonDict } from '../gym/kindedJson';
import { materializeRecords } from '../gym/materialize';
import { mkdirDurably, renameDurably } from '../gym/durable';
import { StagedJsonlFile } from '../gym/stagedJsonl';
import { stageSettings } from '../contracts/stageSettings';
import type { RunPlan } from '../contracts/payloads';
import { SINGLE_STEP_VERDICT_KEYS } from './executors/singleStep';
import { keyedResult, type RolloutExecutor } from './executors/types';
import { stageMaterializeOptions } from './materialize';
import { shardLine, splicedShardLine } from './shardLines';

// Overlap, second half (docs/architecture.md): the run's own local profile reuses an early sample
// only for the very same engine request. A builtin sample's verdict is a function of the request
// (the candidate's prefix and tools, with the sample's seed) and the expected action, and of nothing
// that depends on when or in which segment it was asked; the line written around it is the run's own
// materialized row. So a reused sample gives the bytes a live call gives, and a candidate the early
// profiling missed or saw differently is simply sampled live.

/**
 * Where a local-profile sample sits among the run's candidates: source task, source rollout,
 * decision point, sample index, the order the run's convert writes.
 */
function sampleKey(row: Record<string, unknown>): number[] | undefined {
  const provenance = row.provenance as Record<string, unknown> | undefined;
  const key = [provenance?.task_index, provenance?.rollout_index, provenance?.pivot_index, row._ng_rollout_index];
  return key.every((k): k is number => typeof k === 'number') ? key : undefined;
}

function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

const REQUEST_KEYS = ['responses_create_params', 'expected_action'] as const;

/**
 * A sample's line (a run's materialized row, or an early sample) read for matching. A line in
 * orjson's form, which is how materialization and chunks write them, is only scanned: its request and
 * verdict are slices of it, the very bytes jsonText gives their values. Any other line is decoded.
 */
class SampleLine {
  private constructor(
    readonly key: readonly number[],
    private readonly text: string,
    private readonly entries?: ReadonlyMap<string, CanonicalEntry>,
  ) {}

  /** Undefined when the line has no sample key (or is not JSON: that row is sampled live). */
  static read(text: string): SampleLine | undefined {
    const scanned = orjsonCanonicalObject(text, 'provenance');
    if (scanned?.nested) {
      const number = (e: CanonicalEntry | undefined) => (e ? Number(text.slice(e.valueStart, e.end)) : NaN);
      const nested = new Map(scanned.nested.map((e) => [e.key, e]));
      const entries = new Map(scanned.entries.map((e) => [e.key, e]));
      const key = [
        ...['task_index', 'rollout_index', 'pivot_index'].map((k) => nested.get(k)),
        entries.get('_ng_rollout_index'),
      ].map(number);
      if (key.every(Number.isSafeInteger)) return new SampleLine(key, text, entries);
    }
    let plain: unknown;
    try {
      plain = JSON.parse(text);
    } catch {
      return undefined;
    }
    const key = sampleKey(plain as Record<string, unknown>);
    return key ? new SampleLine(key, text) : undefined;
  }

  /** The request and expected action, as the row's bytes give them. */
  request(): string {
    const found = this.slices(REQUEST_KEYS);
    if (found) return found.join('\n');
    const value = this.decoded();
    return REQUEST_KEYS.map((k) => jsonText(dictGet(value, k))).join('\n');
  }

  /** The verdict entries (`response`, `reward`, `category`) as a JSON object's text. */
  verdict(): string {
    const found = this.slices(SINGLE_STEP_VERDICT_KEYS);
    if (found) return `{${SINGLE_STEP_VERDICT_KEYS.map((k, i) => `${JSON.stringify(k)}:${found[i]}`).join(',')}}`;
    return jsonText(pickEntries(this.decoded(), SINGLE_STEP_VERDICT_KEYS));
  }

  private slices(keys: readonly string[]): string[] | undefined {
    const found = keys.map((k) => this.entries?.get(k));
    if (!found.every((e) => e !== undefined)) return undefined;
    return found.map((e) => this.text.slice(e.valueStart, e.end));
  }

  private decoded(): JsonDict {
    return parseKinded(this.text).kinded as JsonDict;
  }
}

async function* earlySamples(files: readonly string[]): AsyncGenerator<SampleLine> {
  for (const file of files) {
    try {
      for await (const { text } of readLines(file)) {
        const sample = SampleLine.read(text);
        if (sample) yield sample;
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
  private samples: AsyncGenerator<SampleLine> | undefined;
  current: SampleLine | undefined;

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

  /** The verdict text of the early sample with the run row's key and request, moving past the ones before it. */
  async match(row: SampleLine): Promise<string | undefined> {
    while (this.current && compareKeys(this.current.key, row.key) < 0) await this.advance();
    const found = this.current;
    if (!found || compareKeys(found.key, row.key) !== 0) return undefined;
    await this.advance();
    return found.request() === row.request() ? found.verdict() : undefined;
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

/** Ranges [from, to) of the chunks whose every row has an early sample, fed row by row in order. */
class WholeChunks {
  readonly ranges: Array<[number, number]> = [];
  private chunk = 0;
  private rows = 0;
  private matched = 0;

  constructor(private readonly chunkSize: number) {}

  add(row: number, matched: boolean): void {
    const chunk = Math.floor(row / this.chunkSize);
    if (chunk !== this.chunk) this.close(chunk);
    this.rows++;
    if (matched) this.matched++;
  }

  finish(): Array<[number, number]> {
    this.close(this.chunk + 1);
    return this.ranges;
  }

  private close(next: number): void {
    if (this.rows > 0 && this.matched === this.rows) {
      const last = this.ranges.at(-1);
      if (last && last[1] === this.chunk) last[1]++;
      else this.ranges.push([this.chunk, this.chunk + 1]);
    }
    this.chunk = next;
    this.rows = 0;
    this.matched = 0;
  }
}

export interface AlignResult {
  reused: number;
  rows: number;
  /** Chunks whose every row is answered by an early sample, as [from, to) ranges: no request among them. */
  wholeChunks: Array<[number, number]>;
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
}): Promise<AlignResult> {
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
  const whole = new WholeChunks(settings.chunkSize);
  let out: { chunk: number; file: StagedJsonlFile } | undefined;
  try {
    const records = materializeRecords(readJsonl(candidatesPath), stageMaterializeOptions(settings), candidatesPath);
    for await (const { row, text } of records) {
      const sample = SampleLine.read(text);
      const key = sample?.key;
      if (key && previous && compareKeys(key, previous) < 0 && ++restarts <= MAX_RESTARTS) await early.restart();
      previous = key ?? previous;
      const verdict = sample && restarts <= MAX_RESTARTS ? await early.match(sample) : undefined;
      if (verdict !== undefined) {
        const chunk = Math.floor(rows / settings.chunkSize);
        if (out?.chunk !== chunk) {
          await out?.file.commit();
          out = { chunk, file: new StagedJsonlFile(path.join(staging, chunkFileName(chunk))) };
        }
        // Only the verdict: the chunk writes it on the run's own row, so that is all it reads.
        await out.file.writeLine(`${row._ng_task_index}:${row._ng_rollout_index}\t${verdict}\n`);
        reused++;
      }
      whole.add(rows, verdict !== undefined);
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
  return { reused, rows, wholeChunks: whole.finish() };
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
      // Spliced from the row's line when both are in orjson's form: no decoding of the row's prompt.
      const spliced = splicedVerdict(input.text, text, SINGLE_STEP_VERDICT_KEYS);
      if (spliced) return splicedShardLine(spliced.digest, spliced.line);
      const verdict = pickEntries(parseKinded(text).kinded as JsonDict, SINGLE_STEP_VERDICT_KEYS);
      return shardLine(keyedResult(input, withEntries(input.value, verdict)));
    },
  };
}
