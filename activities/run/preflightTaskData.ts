import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../contracts/errors';
import { JsonlError } from '../../gym/errors';
import { readJsonl } from '../../gym/jsonl';
import { isPlainObject } from '../../gym/taskData/pyValues';
import { effectiveTaskDataValidation, taskDataReportLines } from '../../gym/taskData/reportLines';
import { taskDataSchemaSchema, unresolvableRef, type TaskDataSchema } from '../../gym/taskData/schema';
import { TaskDataValidator } from '../../gym/taskData/validateRows';
import { configKeyLocation } from './configFile';
import type { Findings } from './preflightEndpoints';
import { configPathInside, mustBeReadableFile, type RunContext } from './runContext';

// The task-data half of the pre-flight check: the rows a run would collect, validated against
// their resources server's task-data schema (collect.task_data_schema) as NeMo Gym 0.7.0's
// `task_data_validation` does. `warn` findings are notes, `error` findings are problems, so
// `run` refuses to start on them as `ng_prepare_data` refuses to collate.

const SCHEMA_KEY = ['collect', 'task_data_schema'];

/** Adds the findings on the rows of `inputPath` (the first `collect.limit` of them) to `findings`. */
export async function taskDataFindings(ctx: RunContext<unknown>, inputPath: string, findings: Findings): Promise<void> {
  const { task_data_schema: schemaValue, task_data_validation: mode, limit } = ctx.config.collect;
  const effective = effectiveTaskDataValidation(mode ?? 'auto');
  if (effective === 'off' || schemaValue === undefined) return;
  let schemaPath: string;
  let schema: TaskDataSchema;
  try {
    schemaPath = await configPathInside(ctx.configPath, SCHEMA_KEY, ctx.baseDir, schemaValue);
    await mustBeReadableFile(ctx.configPath, SCHEMA_KEY, schemaPath);
    schema = await readTaskDataSchema(ctx.configPath, schemaPath);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    findings.problems.push(err.message);
    return;
  }
  const validator = new TaskDataValidator(schema);
  try {
    for await (const { value, line } of readJsonl(inputPath)) {
      if (limit !== undefined && validator.report.rows >= limit) break;
      // Rows that are not objects are the row scan's problem (preflight.ts), named there.
      if (isPlainObject(value)) validator.validateRow(line, value);
    }
  } catch (err) {
    // The row scan names the bad line; the rows before it were validated.
    if (!(err instanceof JsonlError)) throw err;
  }
  const lines = taskDataReportLines(inputPath, schemaPath, validator.report);
  (effective === 'error' ? findings.problems : findings.notes).push(...lines);
}

async function readTaskDataSchema(configPath: string, schemaPath: string): Promise<TaskDataSchema> {
  const bad = async (reason: string) =>
    new ConfigError(
      `${await configKeyLocation(configPath, SCHEMA_KEY)}: ${SCHEMA_KEY.join('.')}: ${schemaPath} ${reason}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(schemaPath, 'utf8'));
  } catch (err) {
    throw await bad(`is not JSON: ${(err as Error).message}`);
  }
  const result = taskDataSchemaSchema.safeParse(parsed);
  if (!result.success) {
    const first = result.error.issues[0];
    throw await bad(`is not a task-data JSON Schema: ${first?.path.join('.') ?? ''}: ${first?.message ?? 'invalid'}`);
  }
  const dangling = unresolvableRef(result.data);
  if (dangling !== undefined) throw await bad(`refers to ${dangling}, which its $defs do not define`);
  return result.data;
}
