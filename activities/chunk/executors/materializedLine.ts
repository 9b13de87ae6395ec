import { JsonlError } from '../../../gym/errors';
import { reusingCachedDeliverable } from '../../../gym/failureRetry';
import { jsonText } from '../../../gym/jsonl';
import { kindedFrom, type JsonDict } from '../../../gym/kindedJson';
import { materializedRowKeys, type RowKeys } from '../../../gym/rolloutSplice';
import type { MaterializedRow } from '../../../gym/schemas';
import type { MaterializedInput } from './types';

/**
 * A line of the materialized inputs as the chunk activity reads it. Its keys come from a scan of the
 * line (gym/rolloutSplice.ts); the row is decoded only when an executor reads a field of it, which
 * the agent executor does not: it posts the line as it is and splices its answer. A line the scan
 * cannot read (not in orjson's form) is decoded at once. No schema check: only materializeStage
 * writes this file, from rows it validated and then gave agent_ref and both indices.
 */
export class MaterializedLine implements MaterializedInput {
  readonly keys: RowKeys | undefined;
  readonly task: number;
  readonly rollout: number;
  readonly agentName: string;
  private parsed: MaterializedRow | undefined;
  private kinded: JsonDict | undefined;

  constructor(
    readonly text: string,
    private readonly file: string,
    private readonly line: number,
  ) {
    this.keys = materializedRowKeys(text);
    const { task, rollout, agentName } = this.keys ?? {
      task: this.row._ng_task_index,
      rollout: this.row._ng_rollout_index,
      agentName: this.row.agent_ref.name,
    };
    this.task = task;
    this.rollout = rollout;
    this.agentName = agentName;
  }

  get row(): MaterializedRow {
    if (this.parsed === undefined) {
      try {
        this.parsed = JSON.parse(this.text) as MaterializedRow;
      } catch (err) {
        throw new JsonlError(this.file, this.line, `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return this.parsed;
  }

  get value(): JsonDict {
    return (this.kinded ??= kindedFrom(this.text, this.row) as JsonDict);
  }
}

/**
 * What a retry posts when an earlier attempt left a deliverable to judge again (0.7.0's
 * `reuse_cached_deliverable`): the row re-encoded as orjson writes it, with the flag.
 */
export function retryReusingCachedDeliverable(input: MaterializedInput): MaterializedInput {
  const text = jsonText(reusingCachedDeliverable(input.value));
  return new MaterializedLine(text, `the retry of rollout ${input.task}:${input.rollout}`, 1);
}
