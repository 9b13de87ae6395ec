import { defaultRunId } from '../../activities/run/prepare';
import { PIVOT_MINING_STAGES, preflight, type PreflightReport, type RunOutline } from '../../activities/run/preflight';
import { workerSettingsFromEnv } from '../../activities/run/runContext';
import type { PivotMiningInput } from '../../contracts/workflowInputs';

// The pre-flight check as `check` and `run` show it: the run outline on stdout, notes and problems
// on stderr, and an error when there is any problem, so `run` starts nothing.

/** The workflow id `run` gives a run: its run id's, or the start time's. */
export function pivotMiningWorkflowId(runId: string | undefined, startedAt = new Date()): string {
  return `pivot-mining-${runId ?? startedAt.toISOString().replace(/[:.]/g, '-')}`;
}

export class PreflightFailed extends Error {
  constructor(readonly problems: string[]) {
    super(
      `${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'PreflightFailed';
  }
}

/**
 * Checks `input` as this machine's worker settings see it (PIVOT_MINER_BASE_DIR, else the working
 * directory), for the run the workflow `workflowId` would be.
 */
export async function checkRun(input: PivotMiningInput, workflowId: string): Promise<PreflightReport> {
  return preflight(workerSettingsFromEnv(), input, input.run_id ?? defaultRunId(workflowId), process.env);
}

/** The outline of what a run would do, a line per fact. */
export function outlineText(report: PreflightReport): string {
  const outline = report.outline;
  if (!outline) return '';
  const rows = [
    ['config', outline.configPath],
    ['run dir', outline.runDir],
    ['stages', PIVOT_MINING_STAGES.join(' → ')],
    [
      'input',
      `${outline.inputPath}: ${outline.inputRows} rows, ${outline.tasks} tasks${outline.inputComplete ? '' : ' before its first bad line'}`,
    ],
    ['agents', outline.agents.join(', ')],
    ['rollouts', `${outline.rollouts} (${rolloutsBasis(outline)})`],
    ['samples', `${outline.samplesPerCandidate} per pivot candidate (candidates are counted by convert)`],
  ];
  return rows.map(([label, value]) => `${label!.padEnd(10)}${value}`).join('\n');
}

function rolloutsBasis({ inputRows, numRepeats, fanOut }: RunOutline): string {
  if (typeof numRepeats === 'number' && !fanOut) return `${inputRows} rows × num_repeats ${numRepeats}`;
  const repeats = typeof numRepeats === 'number' ? String(numRepeats) : JSON.stringify(numRepeats);
  return `${inputRows} rows, num_repeats ${repeats}${fanOut ? ' per fan_out agent' : ''}`;
}

/** Notes on stderr; throws PreflightFailed listing every problem. */
export function reportFindings(report: PreflightReport): void {
  for (const note of report.notes) console.error(`note: ${note}`);
  if (report.problems.length > 0) throw new PreflightFailed(report.problems);
}
