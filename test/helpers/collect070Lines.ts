import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

// What a collection compared with 0.7.0's (collect070.ts) wrote, read into the form both are
// compared in: the stamps and diagnostics only one side writes cut from its lines.

/** What a collection wrote, in the form both are compared in. */
export interface Collected {
  materializedInputs: string;
  /** Rollout lines in file order. */
  rollouts: string[];
  failures: string[];
  /** `<prefix>_aggregate_metrics.json`, parsed, its entries by environment server name. */
  aggregateMetrics: unknown;
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

// 0.7.0 stamps each rollout with the environment server it ran through (the agent's relay, or an
// alias's) and its result type, last; pivot-miner has no environment servers (docs/nemo-gym.md, the
// 0.7.0 table), so they are cut from 0.7.0's lines, and the test fails if they are not there to cut. A
// rollout its invalid-judge migration (retry_invalid_judge_responses) moved to the sidecar has its
// class, its deliverable's reuse flag when it has one, and marker after them.
export const STAMPS = new RegExp(
  ',"_ng_environment_server":"[a-z_]+","_ng_result_type":"[a-z_]+"' +
    '(,"_ng_failure_class":"judge_invalid"(?:,"reuse_cached_deliverable":true)?,"_ng_migrated_invalid_judge_response":true)?}$',
);

// A row stamped at materialization has its environment server where the agent echoed it: only the
// result type is last.
const RESULT_TYPE = /,"_ng_result_type":"legacy_agent"}$/;

export function withoutStamps(line: string, stamped = false): string {
  if (!stamped) {
    assert.match(line, STAMPS, "0.7.0's rollout ends with its environment server and result type stamps");
    return line.replace(STAMPS, '$1}');
  }
  assert.match(line, RESULT_TYPE, "0.7.0's rollout ends with its result type stamp");
  return line.replace(RESULT_TYPE, '}');
}

// After each failed attempt an agent reported, pivot-miner writes the attempt, its class and error
// to the sidecar row; 0.7.0 writes none of them, so they are cut from ours.
const DIAGNOSTICS = /,"attempt":\d+,"failure_class":"[a-z_]+","error":"(?:[^"\\]|\\.)*"}$/;

export function withoutDiagnostics(line: string): string {
  return DIAGNOSTICS.test(line) ? `${line.replace(DIAGNOSTICS, '')}}` : line;
}

// 0.7.0 writes one entry per environment server in the order its concurrent /aggregate_metrics
// calls complete (asyncio.as_completed), which no run fixes; entries are compared by server name.
export function byEnvironmentServer(metrics: unknown): unknown {
  if (!Array.isArray(metrics)) return metrics;
  const name = (entry: unknown) => String((entry as Record<string, unknown>)._ng_environment_server);
  return [...(metrics as unknown[])].sort((a, b) => name(a).localeCompare(name(b)));
}

export function readCollected(prefix: string, by: '0.7.0' | 'pivot-miner', stamped?: boolean): Collected {
  const rollouts = lines(`${prefix}.jsonl`);
  const cut = (line: string) => withoutStamps(line, stamped);
  const metrics = byEnvironmentServer(JSON.parse(readFileSync(`${prefix}_aggregate_metrics.json`, 'utf8')));
  return {
    materializedInputs: readFileSync(`${prefix}_materialized_inputs.jsonl`, 'utf8'),
    rollouts: by === '0.7.0' ? rollouts.map(cut) : rollouts,
    failures: lines(`${prefix}_failures.jsonl`).map(by === '0.7.0' ? cut : withoutDiagnostics),
    aggregateMetrics: metrics,
  };
}

/** The (task, rollout) index pairs of materialized inputs or rollouts, in order. */
export function indexOrder(text: string | string[]): string[] {
  const all = typeof text === 'string' ? text.split('\n').filter(Boolean) : text;
  return all.map((line) => {
    const row = JSON.parse(line) as { _ng_task_index: number; _ng_rollout_index: number };
    return `${row._ng_task_index}:${row._ng_rollout_index}`;
  });
}
