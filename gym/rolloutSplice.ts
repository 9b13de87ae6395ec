import { RESPONSE_METADATA_KEYS, strippedForAggregateMetrics } from './aggregateMetrics';
import { orjsonCanonicalObject, type CanonicalEntry } from './orjsonCanonical';

// ng_collect_rollouts keys an agent's `/run` answer and writes it: `result = orjson.loads(body)`,
// then `_ng_task_index`, `_ng_rollout_index` and `agent_ref` assigned from the row (new keys go last),
// then `orjson.dumps(result)` (rollout_collection.py run_from_config). When the answer is already in
// orjson's form (gym/orjsonCanonical.ts) and holds none of those keys, that line is the answer's bytes
// with the row's three entries spliced in before its closing brace; the row's own line holds the
// entries in orjson's form too, since materialization writes it with orjson's writer. The rollout's
// `/aggregate_metrics` entry (aggregateMetrics.ts rolloutDigest) is spliced from the same pieces.
// Anything else (an answer in another form, one that reports a failure or carries keys of its own)
// is left to the decode-and-encode path, which handles every case.

/** The keys a row gives its result, in the order NeMo Gym assigns them. */
const ROW_KEYS = ['_ng_task_index', '_ng_rollout_index', 'agent_ref'] as const;

/** Top-level keys that send an answer to the decoding path: the row's keys (assigned in place there)
 * and the routing sentinels (rollout_collection.py NG_NO_PERSIST_KEY, NG_FAILURE_CLASS_KEY,
 * NG_TERMINAL_KEY), whose values decide where the answer goes. */
const DECODED_KEYS: ReadonlySet<string> = new Set([
  ...ROW_KEYS,
  '_ng_no_persist',
  '_ng_failure_class',
  '_ng_failure_terminal',
]);

/** A materialized row's key and agent, and its three result entries as its line holds them. */
export interface RowKeys {
  task: number;
  rollout: number;
  agentName: string;
  /** `"_ng_task_index":…,"_ng_rollout_index":…,"agent_ref":…`, the row's lexemes kept. */
  entriesText: string;
}

const slice = (text: string, e: CanonicalEntry): string => text.slice(e.start, e.end);

/**
 * stripForAggregateMetrics' `response` entry from the entries of a `response` in `text`: its
 * non-null `usage` and `incomplete_details`, in that order, or undefined when it has neither.
 */
function responseMetadataText(text: string, response: readonly CanonicalEntry[]): string | undefined {
  const kept = RESPONSE_METADATA_KEYS.flatMap((key) => {
    const found = response.find((e) => e.key === key);
    return found && text.slice(found.valueStart, found.end) !== 'null' ? [slice(text, found)] : [];
  });
  return kept.length > 0 ? `"response":{${kept.join(',')}}` : undefined;
}

/** The keys of a materialized line in orjson's form; undefined when it is not in that form or lacks them. */
export function materializedRowKeys(line: string): RowKeys | undefined {
  const scanned = orjsonCanonicalObject(line);
  if (!scanned) return undefined;
  const found = ROW_KEYS.map((k) => scanned.entries.find((e) => e.key === k));
  const [task, rollout, agentRef] = found;
  if (!task || !rollout || !agentRef) return undefined;
  const taskIndex = Number(line.slice(task.valueStart, task.end));
  const rolloutIndex = Number(line.slice(rollout.valueStart, rollout.end));
  if (!Number.isSafeInteger(taskIndex) || !Number.isSafeInteger(rolloutIndex)) return undefined;
  const ref = JSON.parse(line.slice(agentRef.valueStart, agentRef.end)) as unknown;
  const name = ref !== null && typeof ref === 'object' ? (ref as { name?: unknown }).name : undefined;
  if (typeof name !== 'string') return undefined;
  return {
    task: taskIndex,
    rollout: rolloutIndex,
    agentName: name,
    entriesText: [task, rollout, agentRef].map((e) => slice(line, e)).join(','),
  };
}

export interface SplicedRollout {
  /** The rollout line NeMo Gym writes, without its `\n`. */
  line: string;
  /** Its `/aggregate_metrics` entry, as rolloutDigest gives it. */
  digest: string;
}

/**
 * The keyed line and digest of an agent's answer `text` for a row with `keys`, or undefined when the
 * answer must be decoded: not in orjson's form, without an object `response`, or with a key of
 * DECODED_KEYS or `alsoDecoded` (keys an option decides on) at its top level.
 */
export function splicedRollout(
  text: string,
  keys: RowKeys,
  alsoDecoded: ReadonlySet<string> = new Set(),
): SplicedRollout | undefined {
  const scanned = orjsonCanonicalObject(text, 'response');
  if (!scanned?.nested) return undefined;
  const kept: string[] = [];
  for (const entry of scanned.entries) {
    if (DECODED_KEYS.has(entry.key) || alsoDecoded.has(entry.key)) return undefined;
    if (!strippedForAggregateMetrics(entry.key)) kept.push(slice(text, entry));
  }
  kept.push(keys.entriesText);
  const metadata = responseMetadataText(text, scanned.nested);
  if (metadata) kept.push(metadata);
  return { line: `${text.slice(0, -1)},${keys.entriesText}}`, digest: `{${kept.join(',')}}` };
}

/**
 * The line and digest of a materialized row `rowText` given a verdict `verdictText`, an object of
 * exactly `keys` in that order (a single step's `response`, `reward`, `category`), its entries
 * assigned as withEntries assigns them: new keys go last. Undefined, to be decoded, when either is
 * not in orjson's form, the verdict holds other keys, the row already holds one of them, or
 * `response` is not an object.
 */
export function splicedVerdict(
  rowText: string,
  verdictText: string,
  keys: readonly string[],
): SplicedRollout | undefined {
  const row = orjsonCanonicalObject(rowText);
  const verdict = orjsonCanonicalObject(verdictText, 'response');
  if (!row || !verdict?.nested) return undefined;
  if (verdict.entries.length !== keys.length || verdict.entries.some((e, i) => e.key !== keys[i])) return undefined;
  const verdictKeys = new Set(keys);
  if (row.entries.some((e) => verdictKeys.has(e.key))) return undefined;
  const kept = [
    ...row.entries.filter((e) => !strippedForAggregateMetrics(e.key)).map((e) => slice(rowText, e)),
    ...verdict.entries.filter((e) => !strippedForAggregateMetrics(e.key)).map((e) => slice(verdictText, e)),
  ];
  const metadata = responseMetadataText(verdictText, verdict.nested);
  if (metadata) kept.push(metadata);
  return { line: `${rowText.slice(0, -1)},${verdictText.slice(1)}`, digest: `{${kept.join(',')}}` };
}
