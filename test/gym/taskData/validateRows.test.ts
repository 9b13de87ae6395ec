import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { before, test } from 'node:test';
import { promisify } from 'node:util';
import { readJsonl } from '../../../gym/jsonl';
import { isPlainObject } from '../../../gym/taskData/pyValues';
import {
  effectiveTaskDataValidation,
  MAX_REPORTED_ROWS,
  TASK_DATA_VALIDATION_MODES,
  taskDataReportLines,
} from '../../../gym/taskData/reportLines';
import { taskDataSchemaSchema, unresolvableRef, type TaskDataSchema } from '../../../gym/taskData/schema';
import { isClean, TaskDataValidator, type TaskDataReport } from '../../../gym/taskData/validateRows';

// Our task-data validation against NeMo Gym 0.7.0's own (nemo_gym.task_data, run by
// fixtures/gym070_task_data.py in the 0.7.0 venv) on the same files and the same schema: the
// schema 0.7.0 prints for a server is the one we read, and every verdict must match — which rows
// fail and at which locations with which Pydantic error types, which keys are undeclared,
// ambiguous or misplaced, and whether the file is clean.

const repoRoot = path.resolve(__dirname, '../../..');
const fixtures = path.join(__dirname, 'fixtures');
const QUIZ_FILES = ['quiz_valid.jsonl', 'quiz_schema_errors.jsonl', 'quiz_keys.jsonl', 'quiz_envelopes.jsonl'];
/** The schema of the server published pivots are served by (gym/gymConfig.ts). */
const PIVOT_SERVER = 'single_step_tool_use_with_argument_comparison';

interface Gym070File {
  rows: number;
  error_rows: number;
  clean: boolean;
  failed: { index: number; envelope: string | null; issues: [(string | number)[], string][] }[];
  unknown_keys: Record<string, number>;
  conflicting_keys: Record<string, number>;
  misplaced_keys: Record<string, number>;
}
interface Gym070Output {
  schema: unknown;
  effective: Record<string, Record<'train_preparation' | 'example_validation', string>>;
  files: Record<string, Gym070File>;
}

const gym070: Record<string, Gym070Output> = {};

async function runGym070(server: string, files: string[]): Promise<Gym070Output> {
  const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh'), '0.7.0'], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .at(-1)!;
  const { stdout } = await promisify(execFile)(
    path.join(binDir, 'python'),
    [path.join(fixtures, 'gym070_task_data.py'), server, ...files],
    { cwd: fixtures, maxBuffer: 1 << 24 },
  );
  return JSON.parse(stdout) as Gym070Output;
}

before(async () => {
  gym070.quiz_fixture = await runGym070('quiz_fixture', QUIZ_FILES);
  gym070[PIVOT_SERVER] = await runGym070(PIVOT_SERVER, ['actions.jsonl']);
});

function schemaOf(server: string): TaskDataSchema {
  const schema = taskDataSchemaSchema.parse(gym070[server]!.schema);
  assert.equal(unresolvableRef(schema), undefined);
  return schema;
}

async function ourReport(schema: TaskDataSchema, file: string): Promise<TaskDataReport> {
  const validator = new TaskDataValidator(schema);
  for await (const { value, line } of readJsonl(path.join(fixtures, file))) {
    assert.ok(isPlainObject(value));
    validator.validateRow(line, value);
  }
  return validator.report;
}

const counts = (keys: Map<string, number[]>) =>
  Object.fromEntries([...keys.entries()].map(([k, lines]) => [k, lines.length]).sort());
const sorted = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort());

/** Our report in the shape of 0.7.0's (its 0-based line indexes, its issue pairs). */
function asGym070(report: TaskDataReport): Omit<Gym070File, 'failed'> & { failed: unknown[] } {
  return {
    rows: report.rows,
    error_rows: report.errorRows.length,
    clean: isClean(report),
    failed: report.errorRows.map(({ line, issues }) => {
      const envelope = issues[0]?.type === 'envelope' ? issues[0].msg : null;
      return { index: line - 1, envelope, issues: envelope ? [] : issues.map((i) => [i.loc, i.type]) };
    }),
    unknown_keys: counts(report.unknownKeys),
    conflicting_keys: counts(report.conflictingKeys),
    misplaced_keys: counts(report.misplacedKeys),
  };
}

function theirs(file: Gym070File) {
  return {
    ...file,
    unknown_keys: sorted(file.unknown_keys),
    conflicting_keys: sorted(file.conflicting_keys),
    misplaced_keys: sorted(file.misplaced_keys),
  };
}

for (const [server, files] of [
  ['quiz_fixture', QUIZ_FILES],
  [PIVOT_SERVER, ['actions.jsonl']],
] as const) {
  for (const file of files) {
    test(`${server} on ${file}: the same verdicts as NeMo Gym 0.7.0`, async () => {
      const expected = gym070[server]!.files[file]!;
      const { summary: _summary, ...comparable } = expected as Gym070File & { summary: string };
      assert.deepEqual(asGym070(await ourReport(schemaOf(server), file)), theirs(comparable));
    });
  }
}

test('the fixtures trip every rule in 0.7.0 (the comparison is not vacuous)', () => {
  const quiz = gym070.quiz_fixture!.files;
  assert.equal(quiz['quiz_valid.jsonl']!.clean, true);
  const types = new Set(
    [...Object.values(quiz), gym070[PIVOT_SERVER]!.files['actions.jsonl']!].flatMap((f) =>
      f.failed.flatMap((r) => r.issues.map(([, type]) => type)),
    ),
  );
  for (const type of [
    'missing',
    'string_type',
    'int_parsing',
    'int_from_float',
    'too_short',
    'greater_than_equal',
    'greater_than',
    'string_too_short',
    'string_too_long',
    'extra_forbidden',
    'list_type',
    'dict_type',
    'literal_error',
    'float_parsing',
    'bool_parsing',
    'bool_type',
    'model_type',
    'union_tag_invalid',
    'union_tag_not_found',
    'model_attributes_type',
  ])
    assert.ok(types.has(type), `a fixture row fails with ${type}`);
  const keys = quiz['quiz_keys.jsonl']!;
  assert.ok(Object.keys(keys.unknown_keys).length > 0 && Object.keys(keys.conflicting_keys).length > 0);
  assert.ok(Object.keys(keys.misplaced_keys).length > 0 && keys.error_rows === 0);
  assert.ok(quiz['quiz_envelopes.jsonl']!.failed.some((r) => r.envelope !== null));
});

test('each mode means what it means in 0.7.0; auto is its train_preparation verdict', () => {
  const effective = gym070.quiz_fixture!.effective;
  assert.deepEqual(Object.keys(effective).sort(), [...TASK_DATA_VALIDATION_MODES].sort());
  for (const mode of TASK_DATA_VALIDATION_MODES)
    assert.equal(effectiveTaskDataValidation(mode), effective[mode]!.train_preparation, mode);
});

test('findings name file and line; failed rows past the fifth are counted, as 0.7.0 does', async () => {
  const file = path.join(fixtures, 'quiz_schema_errors.jsonl');
  const report = await ourReport(schemaOf('quiz_fixture'), 'quiz_schema_errors.jsonl');
  const lines = taskDataReportLines(file, 'quiz.json', report);
  assert.equal(lines.length, MAX_REPORTED_ROWS + 1);
  assert.equal(
    lines[1],
    `${file}:2: fails the task_data schema quiz.json: question: Input should be a valid string [type=string_type]; ` +
      'answer_index: Input should be a valid integer, unable to parse string as an integer [type=int_parsing]',
  );
  assert.equal(lines.at(-1), `${file}: ... and 4 more rows fail the task_data schema quiz.json (9 of 9)`);

  const keysFile = path.join(fixtures, 'quiz_keys.jsonl');
  const keyLines = taskDataReportLines(
    keysFile,
    'quiz.json',
    await ourReport(schemaOf('quiz_fixture'), 'quiz_keys.jsonl'),
  );
  assert.ok(
    keyLines.includes(
      `${keysFile}:1: answer_index: top-level, but the task_data schema quiz.json says the server reads it from verifier_metadata (it would not see it) (3 rows)`,
    ),
    keyLines.join('\n'),
  );
  assert.ok(
    keyLines.includes(
      `${keysFile}:2: questoin: not declared by the task_data schema quiz.json (a typo, or a field missing from the schema?) (1 row)`,
    ),
    keyLines.join('\n'),
  );
  const valid = await ourReport(schemaOf('quiz_fixture'), 'quiz_valid.jsonl');
  assert.deepEqual(taskDataReportLines(file, 'quiz.json', valid), []);
});
