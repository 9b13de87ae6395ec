import { pivotKey } from './pivotIdentity';
import { classifyLocalProfile, type LocalProfileStats } from './selection';

// The pivot-pool rules of nightly mining and the curriculum, pure so they are unit-tested apart from
// the files they are applied to: which pivots a round retires, how a pool is topped up, and the
// union of a version with newly mined pivots.

type PivotRow = Record<string, unknown>;

export type RetirementReason = 'learned' | 'unsolvable';

export interface Retirement {
  key: string;
  round: number;
  reason: RetirementReason;
  uuid: string | null;
}

/**
 * Pivots the policy now always solves (learned) or never solves (unsolvable) retire: they carry no
 * learning signal. The decision is selection's own classification, so a partial profile that the
 * publish step calls incomplete keeps its pivot in the pool rather than retiring it.
 */
export function retirements(
  pool: readonly PivotRow[],
  profiles: ReadonlyMap<number, LocalProfileStats>,
  allowPartial: boolean,
  round: number,
): Retirement[] {
  return pool.flatMap((row, index) => {
    const outcome = classifyLocalProfile(profiles.get(index), allowPartial);
    if (outcome !== 'all_pass' && outcome !== 'all_fail') return [];
    const uuid = (row.provenance as { uuid?: unknown } | undefined)?.uuid;
    return [
      {
        key: pivotKey(row),
        round,
        reason: outcome === 'all_pass' ? 'learned' : 'unsolvable',
        uuid: typeof uuid === 'string' ? uuid : null,
      },
    ];
  });
}

/**
 * Refills `pool` up to `target` pivots from `supply` in supply order, skipping pivots already in
 * the pool or in `excluded` (retired ones never come back). Returns the pivots added.
 */
export function topUp(
  pool: readonly PivotRow[],
  supply: Iterable<PivotRow>,
  target: number,
  excluded: Iterable<string>,
): PivotRow[] {
  const taken = new PivotUnion([...pool.map(pivotKey), ...excluded]);
  const added: PivotRow[] = [];
  for (const row of supply) {
    if (pool.length + added.length >= target) break;
    if (taken.admit(row)) added.push(row);
  }
  return added;
}

/**
 * Union of pivot rows by identity, one row at a time, so pools are merged while streaming: `admit`
 * is true the first time a pivot is seen and false for every later copy, whatever its provenance.
 */
export class PivotUnion {
  private readonly seen: Set<string>;

  constructor(keys: Iterable<string> = []) {
    this.seen = new Set(keys);
  }

  has(row: PivotRow): boolean {
    return this.seen.has(pivotKey(row));
  }

  admit(row: PivotRow): boolean {
    const key = pivotKey(row);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }
}
