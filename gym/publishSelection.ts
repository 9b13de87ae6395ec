import { limitActionMix } from './actionMix';
import { readCandidateSummaries, readDuplicateLinks, readLocalProfile } from './publishInputs';
import { PublishInputError } from './errors';
import type { ParsedPublishOptions } from './publishOptions';
import { selectPivots } from './selection';
import type { CandidateSummary } from './selectionMetrics';
import { ValidationSplit, type Split } from './validationSplit';

// Which candidates a dataset publishes: each is put on a side of the split by its source
// trajectory, then the selection rules decide its outcome.

/**
 * Every candidate's outcome, rule by rule: the mixed test, the ceiling and the budget, then the
 * action mix on each side of the split (so it holds on both sides and on the whole dataset).
 */
export async function selectCandidates(opts: ParsedPublishOptions, splits: readonly Split[]) {
  const summaries = await readCandidateSummaries(opts.candidatesPath);
  if (splits.includes('validation')) {
    await assignSplits(summaries, {
      candidatesPath: opts.candidatesPath,
      skippedPath: opts.skippedPath,
      fraction: opts.validationFraction!,
      seed: opts.validationSeed,
    });
  }
  const profiles = await readLocalProfile(opts.localProfilePath, summaries.length);
  const selections = selectPivots(summaries, profiles, {
    max_pivots: opts.maxPivots,
    allow_partial: opts.allowPartial,
    max_pass_rate: opts.maxPassRate,
  });
  if (opts.maxShare !== undefined) {
    for (const split of splits)
      limitActionMix(
        selections.filter((s) => (s.candidate.split ?? 'train') === split),
        opts.maxShare,
      );
  }
  return selections;
}

/**
 * Puts every candidate on a side of the split by its source trajectory, joining the trajectories
 * convert found a kept pivot in again (the skip audit's duplicates) to the kept pivot's.
 */
async function assignSplits(
  summaries: readonly CandidateSummary[],
  opts: { candidatesPath: string; skippedPath?: string; fraction: number; seed: number },
): Promise<void> {
  const split = new ValidationSplit({ fraction: opts.fraction, seed: opts.seed });
  const byUuid = new Map(summaries.map((s) => [s.uuid, s]));
  for (const link of await readDuplicateLinks(opts.skippedPath)) {
    const kept = byUuid.get(link.duplicateOf)?.trajectory;
    if (kept !== undefined) split.join(kept, link.trajectory);
  }
  for (const summary of summaries) {
    if (summary.trajectory === undefined) {
      throw new PublishInputError(
        opts.candidatesPath,
        summary.line,
        'provenance needs source_file, task_index and rollout_index to split by source trajectory',
      );
    }
    summary.split = split.splitOf(summary.trajectory);
  }
}
