// Port of NeMo Gym's pivot-dataset validator (skill nemo-gym-pivot-datasets,
// validate_pivot_dataset.py): same checks, order, messages, exit codes and metrics, held to the
// recorded cases in shared/fixtures/validator. Plus `gymConfigPath`, which the reference lacks.
import { z } from 'zod';
import { GymConfigError, loadAgentNameCheck } from './validator/gymConfigAgents';
import { InvalidUtf8Error, readJsonlLines } from './validator/jsonlLines';
import { PivotMetrics } from './validator/metrics';
import { loadsPythonJson, PythonJsonDecodeError } from './pythonJson';
import { isBlank, pythonStrip } from './pythonJsonLexis';
import { checkRow, type RowCheckOptions } from './validator/rowChecks';

export const pivotValidatorOptionsSchema = z.object({
  path: z.string().min(1),
  /** When given (even as ''), every row's agent_ref.name must equal it. */
  agentRef: z.string().optional(),
  /** Dotted paths every row must have (non-null), checked in order. */
  requireFields: z.array(z.string()).default([]),
  /** Groups of dotted paths; each row needs at least one path of every non-empty group. */
  requireAnyFields: z.array(z.array(z.string())).default([]),
  checkToolNames: z.boolean().default(true),
  /** A NeMo Gym config YAML whose agents every row's agent_ref must name. */
  gymConfigPath: z.string().min(1).optional(),
});
export type PivotValidatorOptions = z.input<typeof pivotValidatorOptionsSchema>;

export interface PivotValidatorResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** How the reference reads one `--require-any-field` value: comma-separated, each name stripped of
 * Python whitespace, empty names dropped. */
export function parseRequireAnyField(value: string): string[] {
  return value.split(',').map(pythonStrip).filter((name) => name !== '');
}

function failure(message: string): PivotValidatorResult {
  return { exitCode: 1, stdout: '', stderr: `validation failed: ${message}\n` };
}

/**
 * Validates a pivot JSONL file, streaming it line by line and stopping at the first failure.
 * Resolves (never rejects for bad data) with what the reference CLI would print and exit with;
 * a file that cannot be opened rejects, as the reference crashes there.
 */
export async function validatePivotDataset(input: PivotValidatorOptions): Promise<PivotValidatorResult> {
  const options = pivotValidatorOptionsSchema.parse(input);
  const rowOptions: RowCheckOptions = {
    agentRef: options.agentRef,
    requireFields: options.requireFields,
    requireAnyFields: options.requireAnyFields,
    checkToolNames: options.checkToolNames,
  };
  if (options.gymConfigPath !== undefined) {
    try {
      rowOptions.checkAgentName = await loadAgentNameCheck(options.gymConfigPath);
    } catch (error) {
      if (error instanceof GymConfigError) return failure(error.message);
      throw error;
    }
  }

  const metrics = new PivotMetrics();
  try {
    for await (const { lineNumber, text } of readJsonlLines(options.path)) {
      if (isBlank(text)) continue;
      let row;
      try {
        row = loadsPythonJson(text);
      } catch (error) {
        if (!(error instanceof PythonJsonDecodeError)) throw error;
        return failure(`line ${lineNumber}: invalid JSON: ${error.message}`);
      }
      const result = checkRow(row, rowOptions);
      if (!result.ok) return failure(`line ${lineNumber}: ${result.message}`);
      metrics.add(result.summary);
    }
  } catch (error) {
    if (error instanceof InvalidUtf8Error) return failure(error.message);
    throw error;
  }
  if (metrics.rowCount === 0) return failure(`${options.path} contains no JSONL rows`);
  return { exitCode: 0, stdout: metrics.render(), stderr: '' };
}
