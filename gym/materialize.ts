import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type JsonlRecord } from './jsonl';
import { JsonlError } from './errors';
import { pythonJsonDumps } from './pythonJsonDumps';
import { taskRowSchema, type MaterializedRow } from './schemas';

// Materialization as NeMo Gym's rollout collection (`RolloutCollectionHelper._preprocess_rows_from_config`)
// does it, so a materialized inputs file made here is interchangeable with one from `ng_collect_rollouts`
// and the reward profiler keys results to tasks the same way.

export const materializeOptionsSchema = z.object({
  agent_name: z.string().min(1),
  num_repeats: z.number().int().min(1).default(1),
  responses_create_params: z.record(z.string(), z.unknown()).default({}),
  seed_per_repeat: z.boolean().default(false),
  // Upstream treats `limit: 0` as "no limit" (a falsy check); rejecting it avoids that surprise.
  limit: z.number().int().min(1).optional(),
});
export type MaterializeOptions = z.infer<typeof materializeOptionsSchema>;

type Row = Record<string, unknown>;

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? issue.path.map(String).join('.') : 'row';
  return `${where}: ${issue.message}`;
}

/**
 * Upstream keys duplicate detection on the raw line string. We key on the line text without its
 * terminator (hashed, so a million distinct rows cost a few MB), which differs from upstream only for
 * an unterminated last line repeating an earlier line: upstream gives it a new task, we do not.
 */
function lineKey(record: JsonlRecord): string {
  const text = record.text ?? JSON.stringify(record.value);
  return createHash('sha256').update(text).digest('base64');
}

/** Upstream parses `extra_body` (default "{}"), sets `seed`, and writes it back with Python's `json.dumps`. */
function withSeed(row: Row, seed: number, file: string, line: number): void {
  const params = row.responses_create_params as Row;
  const metadata = (params.metadata ??= {});
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw new JsonlError(file, line, 'responses_create_params.metadata must be an object to carry a per-repeat seed');
  }
  const meta = metadata as Row;
  let extraBody: unknown;
  try {
    extraBody = JSON.parse(typeof meta.extra_body === 'string' ? meta.extra_body : '{}');
  } catch {
    throw new JsonlError(file, line, 'responses_create_params.metadata.extra_body is not a JSON string');
  }
  if (typeof extraBody !== 'object' || extraBody === null || Array.isArray(extraBody)) {
    throw new JsonlError(file, line, 'responses_create_params.metadata.extra_body must encode a JSON object');
  }
  (extraBody as Row).seed = seed;
  meta.extra_body = pythonJsonDumps(extraBody);
}

/**
 * Expands task rows into materialized rows, abc → aabbcc. Semantics follow upstream exactly:
 * - a row without `agent_ref` gets `{"name": agent_name}` (upstream adds no `type`), appended last;
 * - overrides are shallow-merged over `responses_create_params`, keeping its key order;
 * - `_ng_task_index` is kept when the row has one; otherwise identical lines share the index of their
 *   first occurrence, counting distinct unindexed lines from 0 (upstream does not skip indices rows
 *   brought themselves, so mixing both can collide, as it does in NeMo Gym);
 * - `_ng_rollout_index` counts per task across the whole file, so a duplicate line continues its
 *   task's rollout indices (a line seen twice with num_repeats 2 yields rollouts 0..3 of one task);
 * - the seed is the rollout index, hence unique within a task even across duplicate lines;
 * - `limit` counts input rows, and rows past it are never read or validated.
 */
export async function* materializeRows(
  rows: AsyncIterable<JsonlRecord> | Iterable<JsonlRecord>,
  opts: MaterializeOptions,
  file: string,
): AsyncGenerator<MaterializedRow> {
  for await (const { row } of materializeRecords(rows, opts, file)) yield row;
}

/** `materializeRows` with the input line each row came from, so a later check can name it. */
export async function* materializeRecords(
  rows: AsyncIterable<JsonlRecord> | Iterable<JsonlRecord>,
  opts: MaterializeOptions,
  file: string,
): AsyncGenerator<{ row: MaterializedRow; line: number }> {
  const options = materializeOptionsSchema.parse(opts);
  const taskIndexByLine = new Map<string, number>();
  const nextRolloutIndex = new Map<number, number>();
  let taken = 0;
  for await (const record of rows) {
    if (options.limit !== undefined && taken >= options.limit) break;
    taken++;
    const check = taskRowSchema.safeParse(record.value);
    if (!check.success) {
      throw new JsonlError(file, record.line, `not a task row: ${check.error.issues.map(describeIssue).join('; ')}`);
    }
    // Validation only: the parsed copy may reorder keys, and rows must pass through byte for byte.
    // A shallow copy suffices because only top-level keys change before each repeat is deep-cloned.
    const row = { ...(record.value as Row) };
    row.agent_ref ??= { name: options.agent_name };
    row.responses_create_params = { ...(row.responses_create_params as Row), ...options.responses_create_params };
    if (row._ng_task_index === undefined) {
      const key = lineKey(record);
      let taskIndex = taskIndexByLine.get(key);
      if (taskIndex === undefined) {
        taskIndex = taskIndexByLine.size;
        taskIndexByLine.set(key, taskIndex);
      }
      row._ng_task_index = taskIndex;
    }
    const taskIndex = row._ng_task_index as number;
    for (let repeat = 0; repeat < options.num_repeats; repeat++) {
      const rolloutIndex = nextRolloutIndex.get(taskIndex) ?? 0;
      nextRolloutIndex.set(taskIndex, rolloutIndex + 1);
      const copy = structuredClone(row);
      copy._ng_rollout_index = rolloutIndex;
      if (options.seed_per_repeat) withSeed(copy, rolloutIndex, file, record.line);
      yield { row: copy as MaterializedRow, line: record.line };
    }
  }
}
