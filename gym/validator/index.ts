// Port of NeMo Gym's pivot-dataset validator (skill nemo-gym-pivot-datasets,
// scripts/validate_pivot_dataset.py): same checks, order, messages, exit codes and metrics, held to
// the recorded cases in test/fixtures/validator. Plus `gymConfigPath`, which the reference lacks.
// The skill lives in `.agents/skills/nemo-gym-pivot-datasets/` from NeMo Gym 0.5.0 on
// (NVIDIA-NeMo/Gym#2007; `.claude/skills/` became a link to it); 0.4.0 kept it in
// `.claude/skills/nemo-gym-pivot-datasets/`. The script is the same in both.
import { z } from 'zod';
import { loadsPythonJson, PythonJsonDecodeError } from '../pythonJson';
import { isBlank } from '../pythonJsonLexis';
import { checkChunk, type ChunkVerdicts } from './chunks';
import type { FastRowOptions } from './fastRows';
import { GymConfigError, loadAgentNames } from './gymConfigAgents';
import { decodeLineBytes, JsonlFile } from './jsonlLines';
import { PivotMetrics } from './metrics';
import { ChunkThreads } from './parallel';
import { checkRow, pythonRowReader, type RowCheckOptions } from './rowChecks';

export { parseRequireAnyField } from './rowChecks';

export const pivotValidatorOptionsSchema = z.object({
  path: z.string().min(1),
  /** When given (even as ''), every row's agent_ref.name must equal it. */
  agentRef: z.string().optional(),
  /** Dotted paths every row must have (non-null), checked in order. */
  requireFields: z.array(z.string()).default([]),
  /** Groups of dotted paths; each row needs at least one path of every non-empty group. */
  requireAnyFields: z.array(z.array(z.string())).default([]),
  checkToolNames: z.boolean().default(true),
  /** Accept function_call_batch pivots (a pivot-miner extension; the reference script refuses them). */
  batchActions: z.boolean().default(false),
  /** A NeMo Gym config YAML whose agents every row's agent_ref must name. */
  gymConfigPath: z.string().min(1).optional(),
  /** Threads for the byte-scan fast path; 1 (the default here) checks on the calling thread.
   * Worth it for large files on a machine with idle cores (the CLI picks that default). */
  threads: z.number().int().min(1).default(1),
  /** What worker threads load: gym/validator/parallel.ts or a bundle of it. The CLI passes a bundle
   * of it alone, which starts far faster than the source through tsx or the CLI's whole bundle. */
  workerScript: z.string().min(1).optional(),
  /** Threads already at work on a guess of this run (scripts/commands/validateEarly.ts): kept if
   * they check the same file with the same options and thread count, else stopped. Checked by
   * shape: the CLI starts them from a bundle of their own, whose ChunkThreads is another class. */
  started: z
    .custom<ChunkThreads>((value) => typeof value === 'object' && value !== null && 'runs' in value && 'close' in value)
    .optional(),
});
export type PivotValidatorOptions = z.input<typeof pivotValidatorOptionsSchema>;

export interface PivotValidatorResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

function failure(message: string): PivotValidatorResult {
  return { exitCode: 1, stdout: '', stderr: `validation failed: ${message}\n` };
}

/** Where the lines end up once the fast path has had its say (here or in a worker thread): accepted
 * rows are counted into the metrics; every other line goes through CPython's decoder and the
 * checks, in file order, so the first failure and its message are the reference's. */
class RowSink {
  readonly metrics = new PivotMetrics();

  constructor(private readonly options: RowCheckOptions) {}

  /** The exact path for one line: the failure message that ends the run, or undefined to go on. */
  private exact(bytes: Buffer, terminated: boolean, lineNumber: number): string | undefined {
    const text = decodeLineBytes(bytes, terminated);
    if (text === undefined) return `line ${lineNumber}: not valid UTF-8`;
    if (isBlank(text)) return undefined;
    let row;
    try {
      row = loadsPythonJson(text);
    } catch (error) {
      if (!(error instanceof PythonJsonDecodeError)) throw error;
      return `line ${lineNumber}: invalid JSON: ${error.message}`;
    }
    const result = checkRow(row, this.options, pythonRowReader);
    if (!result.ok) return `line ${lineNumber}: ${result.message}`;
    this.metrics.add(result.summary);
    return undefined;
  }

  /** Takes the next chunk in file order, whose lines come after `linesBefore` others. */
  take(file: JsonlFile, verdicts: ChunkVerdicts, linesBefore: number): string | undefined {
    const { exact } = verdicts;
    for (let i = 0; i < exact.length; i += 4) {
      const failed = this.exact(
        file.read(exact[i] as number, exact[i + 1] as number),
        exact[i + 3] === 1,
        linesBefore + (exact[i + 2] as number),
      );
      if (failed !== undefined) return failed;
    }
    this.metrics.merge(verdicts.counts);
    return undefined;
  }
}

async function validateLines(
  path: string,
  sink: RowSink,
  fastOptions: FastRowOptions,
  threadCount: number,
  workerScript?: string,
  started?: ChunkThreads,
): Promise<string | undefined> {
  const file = new JsonlFile(path);
  const job = { path, fileSize: file.size, options: fastOptions };
  let threads = started;
  if (threads === undefined || !threads.runs(job, threadCount)) {
    // Threads on a wrong guess would only compete with the right ones.
    await started?.close();
    threads = new ChunkThreads(job, threadCount, workerScript);
  }
  try {
    const mine = new Map<number, ChunkVerdicts>();
    let next = 0;
    let linesBefore = 0;
    const consume = (verdicts: ChunkVerdicts): string | undefined => {
      const failed = sink.take(file, verdicts, linesBefore);
      linesBefore += verdicts.lines;
      next++;
      return failed;
    };
    for (let index = threads.claim(); index !== undefined; index = threads.claim()) {
      mine.set(index, checkChunk(file, index, file.size, fastOptions));
      await threads.receive();
      while (mine.has(next) || threads.has(next)) {
        const failed = consume(mine.get(next) ?? ((await threads.take(next)) as ChunkVerdicts));
        if (failed !== undefined) return failed;
      }
    }
    // Every chunk is claimed: the rest are here or with a worker (checked here if it stopped).
    while (next < threads.chunks) {
      const failed = consume(
        mine.get(next) ?? (await threads.take(next)) ?? checkChunk(file, next, file.size, fastOptions),
      );
      if (failed !== undefined) return failed;
    }
    return undefined;
  } finally {
    await threads.close();
    file.close();
  }
}

/**
 * Validates a pivot JSONL file, streaming it and stopping at the first failure. Resolves (never
 * rejects for bad data) with what the reference CLI would print and exit with; a file that cannot
 * be opened rejects, as the reference crashes there.
 */
export async function validatePivotDataset(input: PivotValidatorOptions): Promise<PivotValidatorResult> {
  const options = pivotValidatorOptionsSchema.parse(input);
  try {
    return await validate(options);
  } finally {
    // Stopped when not taken; when taken, already stopped.
    await options.started?.close();
  }
}

async function validate(options: z.output<typeof pivotValidatorOptionsSchema>): Promise<PivotValidatorResult> {
  const rowOptions: RowCheckOptions = {
    agentRef: options.agentRef,
    requireFields: options.requireFields,
    requireAnyFields: options.requireAnyFields,
    checkToolNames: options.checkToolNames,
    batchActions: options.batchActions,
  };
  const fastOptions: FastRowOptions = { ...rowOptions };
  if (options.gymConfigPath !== undefined) {
    try {
      const agents = await loadAgentNames(options.gymConfigPath);
      rowOptions.checkAgentName = agents.check;
      fastOptions.acceptedAgents = agents.accepted;
    } catch (error) {
      if (error instanceof GymConfigError) return failure(error.message);
      throw error;
    }
  }

  const sink = new RowSink(rowOptions);
  const failed = await validateLines(
    options.path,
    sink,
    fastOptions,
    options.threads,
    options.workerScript,
    options.started,
  );
  if (failed !== undefined) return failure(failed);
  if (sink.metrics.rowCount === 0) return failure(`${options.path} contains no JSONL rows`);
  return { exitCode: 0, stdout: sink.metrics.render(), stderr: '' };
}
