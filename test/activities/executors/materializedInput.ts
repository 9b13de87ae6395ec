import type { MaterializedInput } from '../../../activities/executors/types';
import { jsonLine } from '../../../gym/jsonl';
import type { JsonDict } from '../../../gym/kindedJson';
import type { MaterializedRow } from '../../../gym/schemas';

/** A row as the chunk activity hands it to an executor, for rows that have only plain numbers. */
export function materializedInput(row: MaterializedRow): MaterializedInput {
  return { row, value: row, text: jsonLine(row).trimEnd() };
}

/** A result as the rollouts file holds it, read back with JSON.parse. */
export function writtenResult(result: JsonDict): Record<string, any> {
  return JSON.parse(jsonLine(result));
}
