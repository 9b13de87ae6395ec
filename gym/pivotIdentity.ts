import { createHash } from 'node:crypto';

// The one definition of "the same pivot": conversion dedupes candidates with it, and the pivot pool
// (nightly union, curriculum rounds and their retired list) compares rows across versions with it.
// Keys are persisted (a curriculum's retired list), so the byte form below must not change.

/** JSON with object keys sorted, so equal content serializes equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) out[key] = sortKeys(record[key]);
  return out;
}

/** The parts of a pivot row its identity reads; everything else (provenance, agent_ref, extras) is ignored. */
export interface PivotIdentityFields {
  responses_create_params?: unknown;
  expected_action?: unknown;
}

/**
 * Identity of a pivot: the exact state (the whole request: input prefix, tools, options) and the
 * expected action, whatever its provenance says. A SHA-256 hex digest.
 */
export function pivotKey(row: PivotIdentityFields): string {
  return createHash('sha256')
    .update(canonicalJson([row.responses_create_params, row.expected_action]))
    .digest('hex');
}
