import { aggregateMetrics070 } from './aggregateMetrics070';
import { jsonText } from './jsonl';
import { parseKinded } from './kindedJson';
import type { PyValue } from './pythonJson';
import { orjsonDumps } from './pythonJsonDumps';

// What a NeMo Gym 0.7.0 resources server answers to POST /aggregate_metrics by default
// (SimpleResourcesServer.aggregate_metrics → compute_aggregate_metrics): the embedded stack answers
// it, so a demo's collect-stage aggregate metrics are what 0.7.0's own servers would give. The
// numbers are read and written with their Python kinds, since the collection writes them back as
// they came (`1.0` stays a float).

/** The answer to a request body `{"verify_responses": [...]}` (already checked against its schema), as JSON text. */
export function aggregateMetricsAnswer070(requestText: string): string {
  const { plain, kinded } = parseKinded(requestText);
  const responses =
    kinded instanceof Map
      ? (kinded.get('verify_responses') as PyValue[])
      : (plain as { verify_responses: unknown[] }).verify_responses;
  const metrics = aggregateMetrics070(responses.map(jsonText));
  return orjsonDumps(
    new Map<string, PyValue>([
      ['agent_metrics', metrics?.agentMetrics ?? new Map()],
      ['key_metrics', metrics?.keyMetrics ?? new Map()],
      ['group_level_metrics', metrics?.groups ?? []],
      ['repeat_level_metrics', metrics?.repeats ?? []],
    ]),
  );
}
