// Port of NeMo Gym's pivot-dataset validator (skill nemo-gym-pivot-datasets,
// validate_pivot_dataset.py): same checks, order, messages, exit codes and metrics, held to the
// recorded cases in shared/fixtures/validator. Plus `gymConfigPath`, which the reference lacks.
import { z } from 'zod';
import { loadsPythonJson, PythonJsonDecodeError } from './pythonJson';
import { isBlank, pythonStrip } from './pythonJsonLexis';
import { acceptLineFast, type LineOutcome } from './validator/fastRows';
import { GymConfigError, loadAgentNameCheck } from './validator/gymConfigAgents';
import { decodeLine, InvalidUtf8Error, readJsonlLineBatches, type RawLine } from './validator/jsonlLines';
import { PivotMetrics } from './validator/metrics';
import { FastRowWorkers } from './validator/parallel';
import { checkRow, pythonRowReader, type RowCheckOptions } from './validator/rowChecks';

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
  /** Threads for the byte-scan fast path; 1 (the default here) checks on the calling thread.
   * Worth it for large files on a machine with idle cores (the CLI picks that default). */
  threads: z.number().int().min(1).default(1),
  /** What worker threads load: gym/validator/parallel.ts or a bundle of it. The CLI passes a bundle
   * of it alone, which starts far faster than the source through tsx or the CLI's whole bundle. */
  workerScript: z.string().min(1).optional(),
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

/** Where each line ends up once the fast path has had its say (here or in a worker thread): an
 * accepted row goes into the metrics; any other line goes through CPython's decoder and the checks,
 * in file order, so the first failure and its message are the reference's. */
class RowSink {
  readonly metrics = new PivotMetrics();

  constructor(private readonly options: RowCheckOptions) {}

  /** The failure message that ends the run, or undefined to go on. */
  take(line: RawLine, outcome: LineOutcome): string | undefined {
    if (outcome === 'blank') return undefined;
    if (outcome !== undefined && this.options.checkAgentName?.(outcome.agentName) === undefined) {
      this.metrics.add(outcome);
      return undefined;
    }
    const text = decodeLine(line);
    if (isBlank(text)) return undefined;
    let row;
    try {
      row = loadsPythonJson(text);
    } catch (error) {
      if (!(error instanceof PythonJsonDecodeError)) throw error;
      return `line ${line.lineNumber}: invalid JSON: ${error.message}`;
    }
    const result = checkRow(row, this.options, pythonRowReader);
    if (!result.ok) return `line ${line.lineNumber}: ${result.message}`;
    this.metrics.add(result.summary);
    return undefined;
  }
}

async function validateLines(path: string, sink: RowSink, fastOptions: RowCheckOptions, threads: number, workerScript?: string): Promise<string | undefined> {
  if (threads <= 1) {
    for await (const lines of readJsonlLineBatches(path)) {
      for (const line of lines) {
        const failed = sink.take(line, acceptLineFast(line.bytes, line.terminated, fastOptions));
        if (failed !== undefined) return failed;
      }
    }
    return undefined;
  }
  const workers = new FastRowWorkers(threads, fastOptions, workerScript);
  try {
    // Room for batches checked here while the oldest is still with a worker (a few MiB at most).
    const inFlight: Array<{ lines: RawLine[]; outcomes: Promise<LineOutcome[]> }> = [];
    const settleOldest = async (): Promise<string | undefined> => {
      const { lines, outcomes } = inFlight.shift() as (typeof inFlight)[number];
      const results = await outcomes;
      for (let i = 0; i < lines.length; i++) {
        const failed = sink.take(lines[i] as RawLine, results[i]);
        if (failed !== undefined) return failed;
      }
      return undefined;
    };
    for await (const lines of readJsonlLineBatches(path)) {
      inFlight.push({ lines, outcomes: workers.check(lines) });
      if (inFlight.length > 4 * workers.size) {
        const failed = await settleOldest();
        if (failed !== undefined) return failed;
      }
    }
    while (inFlight.length > 0) {
      const failed = await settleOldest();
      if (failed !== undefined) return failed;
    }
    return undefined;
  } finally {
    await workers.close();
  }
}

/**
 * Validates a pivot JSONL file, streaming it and stopping at the first failure. Resolves (never
 * rejects for bad data) with what the reference CLI would print and exit with; a file that cannot
 * be opened rejects, as the reference crashes there.
 */
export async function validatePivotDataset(input: PivotValidatorOptions): Promise<PivotValidatorResult> {
  const options = pivotValidatorOptionsSchema.parse(input);
  const rowOptions: RowCheckOptions = {
    agentRef: options.agentRef,
    requireFields: options.requireFields,
    requireAnyFields: options.requireAnyFields,
    checkToolNames: options.checkToolNames,
  };
  // The fast path leaves the Gym config check to the sink: a function cannot cross to a thread.
  const fastOptions = { ...rowOptions };
  if (options.gymConfigPath !== undefined) {
    try {
      rowOptions.checkAgentName = await loadAgentNameCheck(options.gymConfigPath);
    } catch (error) {
      if (error instanceof GymConfigError) return failure(error.message);
      throw error;
    }
  }

  const sink = new RowSink(rowOptions);
  try {
    const failed = await validateLines(options.path, sink, fastOptions, options.threads, options.workerScript);
    if (failed !== undefined) return failure(failed);
  } catch (error) {
    if (error instanceof InvalidUtf8Error) return failure(error.message);
    throw error;
  }
  if (sink.metrics.rowCount === 0) return failure(`${options.path} contains no JSONL rows`);
  return { exitCode: 0, stdout: sink.metrics.render(), stderr: '' };
}
