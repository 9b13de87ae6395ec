import { readLines, jsonText } from '../../gym/jsonl';
import { orjsonCanonicalObject, type CanonicalEntry } from '../../gym/orjsonCanonical';
import { dictGet, parseKinded, pickEntries, type JsonDict } from '../../gym/kindedJson';
import { SINGLE_STEP_VERDICT_KEYS } from '../chunk/executors/singleStep';

// The early samples as the run's alignment reads them (activities/early/prefetched.ts): keyed by where a
// sample sits among the run's candidates, with its request and verdict as the line's own bytes.

/**
 * Where a local-profile sample sits among the run's candidates: source task, source rollout,
 * decision point, sample index, the order the run's convert writes.
 */
function sampleKey(row: Record<string, unknown>): number[] | undefined {
  const provenance = row.provenance as Record<string, unknown> | undefined;
  const key = [provenance?.task_index, provenance?.rollout_index, provenance?.pivot_index, row._ng_rollout_index];
  return key.every((k): k is number => typeof k === 'number') ? key : undefined;
}

export function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

const REQUEST_KEYS = ['responses_create_params', 'expected_action'] as const;

/**
 * A sample's line (a run's materialized row, or an early sample) read for matching. A line in
 * orjson's form, which is how materialization and chunks write them, is only scanned: its request and
 * verdict are slices of it, the very bytes jsonText gives their values. Any other line is decoded.
 */
export class SampleLine {
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

/** Two tiers, and a margin: past this the order is not the convert's, and the rest is sampled live. */
const MAX_RESTARTS = 4;

/**
 * The early samples in segment order, which is key order. The run's candidates come in key order
 * within each source-preference tier, so the run's walk starts the cursor over once per tier.
 */
export class EarlySamples {
  private samples: AsyncGenerator<SampleLine> | undefined;
  private current: SampleLine | undefined;
  private previous: readonly number[] | undefined;
  private restarts = 0;

  constructor(private readonly files: readonly string[]) {}

  async open(): Promise<void> {
    await this.close();
    this.samples = earlySamples(this.files);
    await this.advance();
  }

  /** Closes the file being read (the walk may end before the samples do). */
  async close(): Promise<void> {
    await this.samples?.return(undefined);
  }

  /**
   * Follows the run's walk to a row's key: a key below the one before starts a tier, so the cursor
   * starts over. False once the walk has left the convert's order, when nothing more is matched.
   */
  async follow(key: readonly number[] | undefined): Promise<boolean> {
    if (key && this.previous && compareKeys(key, this.previous) < 0 && ++this.restarts <= MAX_RESTARTS) {
      await this.open();
    }
    this.previous = key ?? this.previous;
    return this.restarts <= MAX_RESTARTS;
  }

  /** The verdict text of the early sample with the run row's key and request, moving past the ones before it. */
  async match(row: SampleLine): Promise<string | undefined> {
    while (this.current && compareKeys(this.current.key, row.key) < 0) await this.advance();
    const found = this.current;
    if (!found || compareKeys(found.key, row.key) !== 0) return undefined;
    await this.advance();
    return found.request() === row.request() ? found.verdict() : undefined;
  }

  private async advance(): Promise<void> {
    const next = await this.samples!.next();
    this.current = next.done ? undefined : next.value;
  }
}
