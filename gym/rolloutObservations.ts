// Per-rollout observability fields that NeMo Gym after 0.4.0 attaches to a rollout result (the
// agent's own trajectory record, captured model calls, agent observations). They describe how a
// rollout ran, not what it did: NeMo Gym leaves them out of what it posts to `/aggregate_metrics`
// (rollout_collection.py, `_fetch_agent_metrics`) and out of what it exports, and conversion never
// reads them. They can be larger than the rest of the rollout, so nothing copies them further.
export const ROLLOUT_OBSERVATION_FIELDS: ReadonlySet<string> = new Set([
  'ng_trajectory',
  'ng_model_call_capture',
  'ng_agent_observations',
]);

/** The row without the observability fields; the same object when it has none. */
export function withoutRolloutObservations<T extends Record<string, unknown>>(row: T): T {
  if (!Object.keys(row).some((k) => ROLLOUT_OBSERVATION_FIELDS.has(k))) return row;
  return Object.fromEntries(Object.entries(row).filter(([k]) => !ROLLOUT_OBSERVATION_FIELDS.has(k))) as T;
}
