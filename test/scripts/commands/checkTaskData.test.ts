import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../../../scripts/lib/net';
import {
  baseDirWith,
  check,
  type Config,
  demoTaskLines,
  lineOf,
  problems,
  removeBaseDirs,
} from '../../helpers/checkCli';

// `pivot-miner check` (and `run`'s pre-flight) validating the task rows against their server's
// task-data schema, per collect.task_data_validation: warn findings are notes and the check passes,
// error findings are problems and nothing starts, off and a missing schema check nothing; each
// finding names the rows file and line. The verdicts themselves are compared with NeMo Gym 0.7.0's
// in test/gym/taskData/validateRows.test.ts.

after(removeBaseDirs);

/** The demo rows' task data, as Pydantic prints the JSON Schema of a model for them. */
const DEMO_TASK_DATA_SCHEMA = {
  $defs: {
    Task: {
      additionalProperties: true,
      properties: { kind: { title: 'Kind', type: 'string' } },
      required: ['kind'],
      title: 'Task',
      type: 'object',
    },
  },
  additionalProperties: true,
  properties: {
    task_id: { title: 'Task Id', type: 'string' },
    task: { $ref: '#/$defs/Task' },
    expected_answer: { title: 'Expected Answer', type: 'string' },
    expected_tool_calls: { items: { type: 'object' }, title: 'Expected Tool Calls', type: 'array' },
  },
  required: ['task_id', 'task', 'expected_answer'],
  title: 'TaskData',
  type: 'object',
};
const SCHEMA_FILE = 'data/task_data.schema.json';

function configWith(collect: Config = {}): Config {
  return {
    name: 'check_task_data',
    servers: { mode: 'embedded' },
    collect: {
      input_jsonl: 'data/tasks.jsonl',
      agent_name: 'demo_tool_agent',
      task_data_schema: SCHEMA_FILE,
      ...collect,
    },
  };
}

/** Demo rows where line 2 has a number for its answer, line 4 misspells it, line 5 carries an extra key. */
function badRows(): string[] {
  const rows = demoTaskLines().map((l) => JSON.parse(l) as Config);
  rows[1]!.expected_answer = 5;
  const { expected_answer, ...misspelt } = rows[3]!;
  rows[3] = { ...misspelt, expected_anwser: expected_answer };
  rows[4]!.difficulty = 'easy';
  return rows.map((r) => JSON.stringify(r));
}

function baseDir(config: Config, rows = badRows(), schema: string = JSON.stringify(DEMO_TASK_DATA_SCHEMA)) {
  const dir = baseDirWith(config, rows);
  writeFileSync(path.join(dir, SCHEMA_FILE), schema);
  return dir;
}

function expectedFindings(dir: string): string[] {
  const tasks = path.join(dir, 'data/tasks.jsonl');
  const against = `fails the task_data schema ${path.join(dir, SCHEMA_FILE)}`;
  return [
    `${tasks}:2: ${against}: expected_answer: Input should be a valid string [type=string_type]`,
    `${tasks}:4: ${against}: expected_answer: Field required [type=missing]`,
    `${tasks}:5: difficulty: not declared by the task_data schema ${path.join(dir, SCHEMA_FILE)} (a typo, or a field missing from the schema?) (1 row)`,
  ];
}

const notes = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('note: ') && l.includes('task_data'))
    .map((l) => l.slice('note: '.length));

test('auto (the default) warns: each finding a note naming file and line, and the check passes', async () => {
  const dir = baseDir(configWith());
  const { code, stdout, stderr } = await check(dir, {});
  assert.equal(code, 0, stderr);
  assert.deepEqual(notes(stderr), expectedFindings(dir));
  assert.match(stdout, /^ok: nothing a run would refuse$/m);

  const clean = await check(baseDir(configWith(), demoTaskLines()), {});
  assert.equal(clean.code, 0, clean.stderr);
  assert.deepEqual(notes(clean.stderr), []);
});

test('error: the findings are problems, and run refuses before it connects to Temporal', async () => {
  const dir = baseDir(configWith({ task_data_validation: 'error' }));
  const checked = await check(dir, {});
  assert.equal(checked.code, 1);
  assert.deepEqual(problems(checked.stderr), expectedFindings(dir));

  const temporal = `127.0.0.1:${await freePort()}`;
  const run = await check(dir, { TEMPORAL_ADDRESS: temporal }, 'run');
  assert.equal(run.code, 1);
  assert.deepEqual(problems(run.stderr), expectedFindings(dir));
  assert.doesNotMatch(run.stderr, new RegExp(temporal));
});

test('off, or no schema: the rows are not validated; limit: only the rows a run reads', async () => {
  const off = await check(baseDir(configWith({ task_data_validation: 'off' })), {});
  assert.equal(off.code, 0, off.stderr);
  assert.deepEqual(notes(off.stderr), []);
  const noSchema = configWith({ task_data_validation: 'error' });
  delete noSchema.collect.task_data_schema;
  const unchecked = await check(baseDir(noSchema), {});
  assert.equal(unchecked.code, 0, unchecked.stderr);

  const dir = baseDir(configWith({ task_data_validation: 'error', limit: 3 }));
  const limited = await check(dir, {});
  assert.equal(limited.code, 1);
  assert.deepEqual(problems(limited.stderr), expectedFindings(dir).slice(0, 1));
});

test('a schema that cannot be used is named at its config line', async () => {
  for (const [schema, reason] of [
    ['{"type": "object", ', /is not JSON: /],
    ['{"type": 3}', /is not a task-data JSON Schema: type: /],
    ['{"properties": {"a": {"$ref": "#/$defs/Gone"}}}', /refers to #\/\$defs\/Gone, which its \$defs do not define$/],
  ] as const) {
    const dir = baseDir(configWith(), badRows(), schema);
    const { code, stderr } = await check(dir, {});
    assert.equal(code, 1);
    const config = path.join(dir, 'config.yaml');
    const [found, ...rest] = problems(stderr);
    assert.deepEqual(rest, []);
    const line = lineOf(readFileSync(config, 'utf8'), 'task_data_schema');
    assert.ok(found!.startsWith(`${config}:${line}: collect.task_data_schema: ${path.join(dir, SCHEMA_FILE)} `), found);
    assert.match(found!, reason);
  }
});
