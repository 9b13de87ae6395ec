import type { Item } from './items';

export const SOURCE_FORMATS = ['gym_rollouts', 'chat_completions', 'conversational', 'tool_messages'] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/**
 * One source trajectory in Responses items, whatever shape it came in. Decision points are read
 * from `output` only: `prefix` holds what the task gave the model (for NeMo Gym rollouts, the
 * `responses_create_params.input`, whose assistant turns were not taken in this rollout).
 */
export interface Trajectory {
  prefix: Item[];
  output: Item[];
  tools: Item[];
  /** `responses_create_params.instructions`, part of the state the model acted in. */
  instructions?: string;
  reward: number | null;
  /** Why the source is not clean (error or truncated response), or undefined when it is. */
  uncleanReason?: string;
  taskIndex?: number;
  rolloutIndex?: number;
  /** Provenance the source row carried about itself (conversational traces). */
  sourceTrace?: Record<string, unknown>;
}

/** A row that fits its file's format but cannot be read as a trajectory. */
export interface RowRejection {
  reason: 'malformed_trajectory';
  detail: string;
}

export type RowConversion = { ok: true; trajectory: Trajectory } | ({ ok: false } & RowRejection);

export function rejectRow(detail: string): RowConversion {
  return { ok: false, reason: 'malformed_trajectory', detail };
}

/** A non-negative integer index field, or undefined. */
export function indexField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function rewardField(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
