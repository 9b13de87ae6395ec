// Where every rollout a stage was asked for went. A rollout stage is asked for one rollout per
// materialized row; each ends in exactly one of three places: the main file (succeeded), the
// failures sidecar and not the main file (failed, by the class of its last attempt), or neither
// (omitted: the agent said not to persist it, or it was never run). So the counts add up:
//   expected = succeeded + failed + omitted,  failed = Σ failed_by_class,  terminal ≤ failed.
// A failure never becomes a reward: it is not in the main file, which is all a pass rate reads.

/** Where a stage's expected rollouts went. Plain data (no schema), so workflows can hold it. */
export interface RolloutAccounting {
  /** Materialized rows: one rollout each was asked for. */
  expected: number;
  /** Rollouts in the main file. */
  succeeded: number;
  /** Rollouts whose every attempt failed (in the failures sidecar, not the main file). */
  failed: number;
  /** Failed rollouts by the failure class of their last attempt. */
  failed_by_class: Record<string, number>;
  /** Of the failed: those a resume will not try again (flagged terminal, or out of attempts). */
  terminal: number;
  /** Rollouts with neither a result nor a failure line (not to be persisted, or never run). */
  omitted: number;
  /** Failure lines, recovered attempts included. */
  failed_attempts: number;
  /** Succeeded rollouts that failed at least once first. */
  recovered: number;
}

/** The invariants a stage's accounting must meet; an empty list when it adds up. */
export function accountingProblems(a: RolloutAccounting): string[] {
  const problems: string[] = [];
  const byClass = Object.values(a.failed_by_class).reduce((sum, n) => sum + n, 0);
  if (a.succeeded + a.failed + a.omitted !== a.expected)
    problems.push(`succeeded ${a.succeeded} + failed ${a.failed} + omitted ${a.omitted} != expected ${a.expected}`);
  if (byClass !== a.failed) problems.push(`failed_by_class sums to ${byClass}, not failed ${a.failed}`);
  if (a.omitted < 0)
    problems.push(`omitted ${a.omitted} < 0: a result or failure names a key that was not materialized`);
  if (a.terminal > a.failed) problems.push(`terminal ${a.terminal} > failed ${a.failed}`);
  if (a.recovered > a.succeeded) problems.push(`recovered ${a.recovered} > succeeded ${a.succeeded}`);
  return problems;
}

interface KeyFailures {
  attempts: number;
  lastClass: string;
  terminal: boolean;
}

/**
 * Accounting of one stage, fed the failures sidecar line by line, then the keys of the main file.
 * Memory follows the keys that failed at least once, not the stage's size.
 */
export class RolloutAccountant {
  private readonly failures = new Map<string, KeyFailures>();
  private failureLines = 0;
  private succeeded = 0;
  private recovered = 0;

  constructor(
    private readonly expected: number,
    private readonly maxAttempts: number,
  ) {}

  /** One sidecar line: its key, its class and whether NeMo Gym would never retry it (`_ng_failure_terminal`). */
  addFailure(key: string, failureClass: string, terminal: boolean): void {
    this.failureLines += 1;
    const seen = this.failures.get(key);
    if (seen === undefined) this.failures.set(key, { attempts: 1, lastClass: failureClass, terminal });
    else
      this.failures.set(key, {
        attempts: seen.attempts + 1,
        lastClass: failureClass,
        terminal: seen.terminal || terminal,
      });
  }

  /** One key of the main file (keys are unique there: the merge writes each once). */
  addSuccess(key: string): void {
    this.succeeded += 1;
    if (this.failures.delete(key)) this.recovered += 1;
  }

  result(): RolloutAccounting {
    const byClass = new Map<string, number>();
    let terminal = 0;
    for (const f of this.failures.values()) {
      byClass.set(f.lastClass, (byClass.get(f.lastClass) ?? 0) + 1);
      if (f.terminal || f.attempts >= this.maxAttempts) terminal += 1;
    }
    const failed = this.failures.size;
    return {
      expected: this.expected,
      succeeded: this.succeeded,
      failed,
      failed_by_class: Object.fromEntries([...byClass].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      terminal,
      omitted: this.expected - this.succeeded - failed,
      failed_attempts: this.failureLines,
      recovered: this.recovered,
    };
  }
}

/** `collect.expected`-style keys for the flat counts of a progress query or a CLI summary. */
export function accountingCounts(stage: string, a: RolloutAccounting): Record<string, number> {
  const out: Record<string, number> = {
    [`${stage}.expected`]: a.expected,
    [`${stage}.succeeded`]: a.succeeded,
    [`${stage}.failed`]: a.failed,
  };
  for (const [cls, n] of Object.entries(a.failed_by_class)) out[`${stage}.failed.${cls}`] = n;
  out[`${stage}.terminal`] = a.terminal;
  out[`${stage}.omitted`] = a.omitted;
  return out;
}
