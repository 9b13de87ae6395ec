import { STATUS_CODES } from 'node:http';
import { dictGet, type JsonDict } from '../../gym/kindedJson';
import type { FailureClass, RequestFailure } from '../http/client';
import type { MaterializedInput } from './executors/types';

// The failures-sidecar row NeMo Gym 0.7.0 writes for a failed agent `/run` under
// `route_failures_to_sidecar` (rollout_collection.py `_agent_request_failure_row`, then keyed by the
// row): its failure class, the Python exception's type and text, the HTTP status and the start of
// the body, then the rollout's keys and agent. No reward and no response: a request that failed is
// not a verifier's zero.

/** Statuses something in front of a server answers with: they say nothing about whether the rollout ran. */
const SERVER_DID_NOT_RUN = new Set([429, 502, 503, 504]);
const MAX_BODY_CHARS = 2000;

/**
 * The exception aiohttp raises for each way a request fails, and its text. An HTTP status is
 * aiohttp's `ClientResponseError`, whose text is rebuilt as aiohttp writes it (with the standard
 * reason phrase); the others are named as 0.7.0 would see them, with pivot-miner's own text.
 */
function pythonException(failure: RequestFailure): { type: string; message: string } {
  const answered = failure.answered;
  if (answered) {
    const reason = STATUS_CODES[answered.status] ?? '';
    return {
      type: 'ClientResponseError',
      message: `${answered.status}, message='${reason}', url='${answered.url}'`,
    };
  }
  const types: Partial<Record<FailureClass, string>> = {
    timeout: 'TimeoutError',
    connection: 'ClientConnectorError',
    invalid_response: 'JSONDecodeError',
  };
  return { type: types[failure.failureClass] ?? 'ClientError', message: failure.message };
}

/** The body as 0.7.0 keeps it: at most 2000 characters, marked when the body was longer, none when empty. */
function truncatedBody(body: string | undefined): string | null {
  if (!body) return null;
  const bytes = Buffer.from(body, 'utf8');
  const chars = Array.from(bytes.subarray(0, MAX_BODY_CHARS * 4).toString('utf8'));
  return chars.slice(0, MAX_BODY_CHARS).join('') + (bytes.length > MAX_BODY_CHARS ? '…' : '');
}

/** 0.7.0's sidecar row for `row`'s failed `/run`. */
export function routedFailureRow(row: MaterializedInput, failure: RequestFailure): JsonDict {
  const status = failure.answered?.status ?? null;
  const ran = status !== null && !SERVER_DID_NOT_RUN.has(status);
  const { type, message } = pythonException(failure);
  return {
    _ng_failure_class: ran ? 'agent_run_error' : 'agent_request_failed',
    _ng_failure_type: type,
    _ng_failure_message: message,
    _ng_failure_http_status: status,
    _ng_failure_response_body: truncatedBody(failure.answered?.body),
    _ng_task_index: row.task,
    _ng_rollout_index: row.rollout,
    agent_ref: dictGet(row.value, 'agent_ref'),
  };
}
