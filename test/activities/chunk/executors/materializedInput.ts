import { MaterializedLine } from '../../../../activities/chunk/executors/materializedLine';
import type { MaterializedInput } from '../../../../activities/chunk/executors/types';
import { parseShardLine } from '../../../../activities/chunk/shardLines';
import { jsonLine } from '../../../../gym/jsonl';
import type { MaterializedRow } from '../../../../gym/schemas';

/** A row as the chunk activity hands it to an executor, for rows that have only plain numbers. */
export function materializedInput(row: MaterializedRow): MaterializedInput {
  return new MaterializedLine(jsonLine(row).trimEnd(), 'materialized_inputs.jsonl', 1);
}

/** The rollout line of an executor's shard line, as NeMo Gym writes it. */
export function rolloutText(shardLine: string): string {
  return parseShardLine({ text: shardLine.trimEnd() }).line;
}

/** A rollout as the rollouts file holds it, read back with JSON.parse. */
export function writtenResult(shardLine: string): Record<string, any> {
  return JSON.parse(rolloutText(shardLine));
}
