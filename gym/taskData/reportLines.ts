import { isClean, type TaskDataReport } from './validateRows';
import type { TaskDataIssue } from './validateValue';

// How a task-data report is told, one line per finding naming file and line, and what each
// `task_data_validation` mode does with it (NeMo Gym 0.7.0's names and meanings).

export const TASK_DATA_VALIDATION_MODES = ['off', 'warn', 'error', 'auto'] as const;
export type TaskDataValidationMode = (typeof TASK_DATA_VALIDATION_MODES)[number];

/**
 * 0.7.0 resolves `auto` to `error` only for the example data its own repo gates pull requests on,
 * and to `warn` for user datasets (`train_preparation`): task rows a run collects are the latter.
 */
export function effectiveTaskDataValidation(mode: TaskDataValidationMode): Exclude<TaskDataValidationMode, 'auto'> {
  return mode === 'auto' ? 'warn' : mode;
}

/** 0.7.0 records the first five failed rows of a file and counts the rest. */
export const MAX_REPORTED_ROWS = 5;

function issueText({ loc, msg, type }: TaskDataIssue): string {
  return `${loc.length > 0 ? loc.join('.') : '(row)'}: ${msg} [type=${type}]`;
}

function keyLines(file: string, keys: Map<string, number[]>, reason: string): string[] {
  return [...keys.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(
      ([key, lines]) => `${file}:${lines[0]}: ${key}: ${reason} (${lines.length} row${lines.length === 1 ? '' : 's'})`,
    );
}

/** Every finding of `report` on `file`, checked against the schema called `schemaName`; none when clean. */
export function taskDataReportLines(file: string, schemaName: string, report: TaskDataReport): string[] {
  if (isClean(report)) return [];
  const against = `the task_data schema ${schemaName}`;
  const failed = report.errorRows;
  const lines = failed
    .slice(0, MAX_REPORTED_ROWS)
    .map(({ line, issues }) => `${file}:${line}: fails ${against}: ${issues.map(issueText).join('; ')}`);
  if (failed.length > MAX_REPORTED_ROWS)
    lines.push(
      `${file}: ... and ${failed.length - MAX_REPORTED_ROWS} more rows fail ${against} (${failed.length} of ${report.rows})`,
    );
  lines.push(
    ...keyLines(
      file,
      report.conflictingKeys,
      'different values at the top level and in verifier_metadata or task_data (ambiguous)',
    ),
    ...keyLines(
      file,
      report.misplacedKeys,
      `top-level, but ${against} says the server reads it from verifier_metadata (it would not see it)`,
    ),
    ...keyLines(file, report.unknownKeys, `not declared by ${against} (a typo, or a field missing from the schema?)`),
  );
  return lines;
}
