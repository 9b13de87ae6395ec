import { type Item, isRecord } from './items';
import { toResponsesTools } from './tools';
import { type RowConversion, indexField, rejectRow, rewardField } from './trajectory';

/** Does this row look like a NeMo Gym rollout (the agent's result for one task row)? */
export function looksLikeGymRollout(row: Record<string, unknown>): boolean {
  return isRecord(row.responses_create_params) && isRecord(row.response);
}

/**
 * Reads a NeMo Gym rollout line. Messy shapes seen in real rollouts are read by meaning: a string
 * `input` is one user message, an output of cumulative transitions (aviary) is its last
 * transition, and tools declared only on the response are the tools the model saw.
 */
export function fromGymRolloutRow(row: Record<string, unknown>): RowConversion {
  const params = row.responses_create_params;
  const response = row.response;
  if (!isRecord(params)) return rejectRow('responses_create_params is not an object');
  if (!isRecord(response)) return rejectRow('response is not an object');

  const prefix = inputItems(params.input);
  if (typeof prefix === 'string') return rejectRow(prefix);
  const output = outputItems(response.output);
  if (typeof output === 'string') return rejectRow(output);

  const requestTools = toResponsesTools(params.tools);
  if (requestTools.error) return rejectRow(`responses_create_params.tools: ${requestTools.error}`);
  let tools = requestTools.tools;
  if (tools.length === 0) {
    const responseTools = toResponsesTools(response.tools);
    if (responseTools.error) return rejectRow(`response.tools: ${responseTools.error}`);
    tools = responseTools.tools;
  }

  return {
    ok: true,
    trajectory: {
      prefix,
      output,
      tools,
      instructions:
        typeof params.instructions === 'string' && params.instructions !== '' ? params.instructions : undefined,
      reward: rewardField(row.reward),
      uncleanReason: uncleanReason(response),
      taskIndex: indexField(row._ng_task_index) ?? indexField(row.task_idx),
      rolloutIndex: indexField(row._ng_rollout_index),
    },
  };
}

function inputItems(input: unknown): Item[] | string {
  if (typeof input === 'string') return [{ content: input, role: 'user', type: 'message' }];
  if (input === undefined || input === null) return [];
  if (!Array.isArray(input))
    return `responses_create_params.input is neither a list nor a string (saw ${typeof input})`;
  if (!input.every(isRecord)) return 'responses_create_params.input holds an item that is not an object';
  return input;
}

function outputItems(output: unknown): Item[] | string {
  if (!Array.isArray(output)) return `response.output is not a list (saw ${output === null ? 'null' : typeof output})`;
  // Agents that record transitions store one cumulative list per step; each is a prefix of the
  // next, so the last one is the whole trajectory.
  const last = output.length > 0 && output.every(Array.isArray) ? output[output.length - 1] : output;
  if (!Array.isArray(last) || !last.every(isRecord)) return 'response.output holds an item that is not an object';
  return last as Item[];
}

function uncleanReason(response: Record<string, unknown>): string | undefined {
  if (response.error !== undefined && response.error !== null) return 'response.error is set';
  if (response.incomplete_details !== undefined && response.incomplete_details !== null)
    return 'response.incomplete_details is set';
  return undefined;
}
