import { pythonJsonDumps, pythonRound } from './pythonJsonDumps';

// Dataset metrics in the format NeMo Gym's `ng_prepare_data` writes next to each dataset
// (`<stem>_metrics.json`), so a published pivot file carries the same summary a NeMo Gym user
// expects. Semantics follow upstream nemo_gym/train_data_utils.py (current version, which no longer
// prints a median; some fixture files come from an older version that did).

export const NUMBER_OF_EXAMPLES = 'Number of examples';
export const NUMBER_OF_TOOLS = 'Number of tools';
export const JSON_DUMPED_WORDS = 'Json-dumped number of words (proxy for token count)';
export const NUMBER_OF_TURNS = 'Number of turns';
export const TEMPERATURE = 'Temperature';

export interface NumericSummary {
  'Total # non-null values': number;
  Average: number;
  Min: number;
  Max: number;
  'Standard deviation': number;
}
export interface StringSummary {
  unique_count: number;
  total_count: number;
}
export interface DatasetMetrics {
  [NUMBER_OF_EXAMPLES]: number;
  [NUMBER_OF_TOOLS]: NumericSummary;
  [JSON_DUMPED_WORDS]: NumericSummary;
  [NUMBER_OF_TURNS]: NumericSummary;
  [TEMPERATURE]: NumericSummary;
  [extraField: string]: number | NumericSummary | StringSummary;
}

/** Keys whose values NeMo Gym serialises as Python floats (so `14` is written `14.0`). */
const FLOAT_KEYS = new Set(['Average', 'Min', 'Max', 'Median', 'Standard deviation']);

/** Python's `round(x, 2)` when |x| ≥ 1 else `round(x, 3)`: what NeMo Gym applies to every stat. */
export function roundMetric(x: number): number {
  return x >= 1 || x <= -1 ? pythonRound(x, 2) : pythonRound(x, 3);
}

/** Running count, mean, sample variance (Welford), min and max, as NeMo Gym accumulates them. */
export class NumericAccumulator {
  private count = 0;
  private mean = 0;
  private m2 = 0;
  private min = Infinity;
  private max = -Infinity;

  observe(x: number): void {
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
    this.count += 1;
    const delta = x - this.mean;
    this.mean += delta / this.count;
    this.m2 += delta * (x - this.mean);
  }

  summary(): NumericSummary {
    const n = this.count;
    return {
      'Total # non-null values': n,
      Average: roundMetric(n > 0 ? this.mean : 0),
      Min: roundMetric(n > 0 ? this.min : 0),
      Max: roundMetric(n > 0 ? this.max : 0),
      'Standard deviation': roundMetric(n > 1 ? Math.sqrt(this.m2 / (n - 1)) : 0),
    };
  }
}

class StringCounter {
  private readonly seen = new Set<string>();
  private total = 0;

  observe(s: string): void {
    this.seen.add(s);
    this.total += 1;
  }

  summary(): StringSummary {
    return { unique_count: this.seen.size, total_count: this.total };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `len(json.dumps(responses_create_params).split())`: Python separators put the spaces that count. */
export function jsonDumpedWordCount(value: unknown): number {
  return pythonJsonDumps(value)
    .split(' ')
    .filter((w) => w.length > 0).length;
}

/**
 * Streaming accumulator: `add` one parsed row at a time, `result` at the end. Rows without an
 * object `responses_create_params` are what NeMo Gym calls offending examples and count nowhere.
 */
export class DatasetMetricsAccumulator {
  private examples = 0;
  private readonly tools = new NumericAccumulator();
  private readonly words = new NumericAccumulator();
  private readonly turns = new NumericAccumulator();
  private readonly temperature = new NumericAccumulator();
  private readonly extras = new Map<string, NumericAccumulator | StringCounter>();

  add(row: Record<string, unknown>): boolean {
    const params = row.responses_create_params;
    if (!isRecord(params)) return false;
    this.examples += 1;

    if (Array.isArray(params.tools)) this.tools.observe(params.tools.length);

    const input = typeof params.input === 'string' ? [{ role: 'user', content: params.input }] : params.input;
    const userTurns = Array.isArray(input) ? input.filter((i) => isRecord(i) && i.role === 'user').length : 0;
    if (userTurns > 0) this.turns.observe(userTurns);

    if (typeof params.temperature === 'number') this.temperature.observe(params.temperature);

    this.words.observe(jsonDumpedWordCount(params));

    for (const [key, value] of Object.entries(row)) {
      if (key === 'responses_create_params' || key === 'response') continue;
      for (const item of Array.isArray(value) ? value : [value]) this.observeExtra(key, item);
    }
    return true;
  }

  private observeExtra(key: string, item: unknown): void {
    const numeric = typeof item === 'boolean' ? Number(item) : item;
    const existing = this.extras.get(key);
    // A field seen first as a number stays numeric (and vice versa); NeMo Gym would crash on the mix.
    if (typeof numeric === 'number' && Number.isFinite(numeric)) {
      const acc = existing ?? new NumericAccumulator();
      if (!existing) this.extras.set(key, acc);
      if (acc instanceof NumericAccumulator) acc.observe(numeric);
    } else if (typeof numeric === 'string') {
      const acc = existing ?? new StringCounter();
      if (!existing) this.extras.set(key, acc);
      if (acc instanceof StringCounter) acc.observe(numeric);
    }
  }

  result(): DatasetMetrics {
    const metrics: DatasetMetrics = {
      [NUMBER_OF_EXAMPLES]: this.examples,
      [NUMBER_OF_TOOLS]: this.tools.summary(),
      [JSON_DUMPED_WORDS]: this.words.summary(),
      [NUMBER_OF_TURNS]: this.turns.summary(),
      [TEMPERATURE]: this.temperature.summary(),
    };
    for (const [key, acc] of this.extras) {
      if (!(key in metrics)) metrics[key] = acc.summary();
    }
    return metrics;
  }
}

export function computeDatasetMetrics(rows: Iterable<Record<string, unknown>>): DatasetMetrics {
  const acc = new DatasetMetricsAccumulator();
  for (const row of rows) acc.add(row);
  return acc.result();
}

/** The dataset block NeMo Gym puts first in a metrics file (its `DatasetConfig` dump). */
export interface DatasetMetricsHeader {
  name: string;
  type: string;
  jsonl_fpath: string;
  num_repeats?: number;
  source?: string | null;
  gitlab_identifier?: unknown;
  huggingface_identifier?: unknown;
  license?: string | null;
}

export function datasetMetricsHeader(h: DatasetMetricsHeader): Record<string, unknown> {
  return {
    name: h.name,
    type: h.type,
    jsonl_fpath: h.jsonl_fpath,
    num_repeats: h.num_repeats ?? 1,
    source: h.source ?? null,
    gitlab_identifier: h.gitlab_identifier ?? null,
    huggingface_identifier: h.huggingface_identifier ?? null,
    license: h.license ?? null,
  };
}

/** The file text exactly as NeMo Gym's `json.dump(..., indent=4)` writes it (no trailing newline). */
export function formatDatasetMetricsFile(header: Record<string, unknown> | null, metrics: DatasetMetrics): string {
  return pythonJsonDumps({ ...(header ?? {}), ...metrics }, { indent: 4, floatKeys: FLOAT_KEYS });
}
