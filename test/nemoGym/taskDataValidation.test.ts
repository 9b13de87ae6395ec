import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { TASK_DATA_VALIDATION_MODES } from '../../gym/taskData/reportLines';
import { baseDirWith, check, removeBaseDirs } from '../helpers/checkCli';

// The real NeMo Gym 0.7.0 commands beside `pivot-miner check` on the same task rows: the schema
// comes from 0.7.0's `gym env schema` (as docs/nemo-gym.md says to get it), and for each
// task_data_validation mode `ng_prepare_data +mode=train_preparation` and check agree on whether
// the rows are refused, whether findings are shown, which rows fail and how many.

const repoRoot = path.resolve(__dirname, '../..');
const SERVER = 'single_step_tool_use_with_argument_comparison';
const ROWS = path.join(repoRoot, 'test/gym/taskData/fixtures/actions.jsonl');

// The dataset is declared by the resources server: 0.7.0 looks a dataset's schema up through the
// server instances that declare datasets, so one declared only by an agent is not validated.
const GYM_CONFIG = `tool_use_resources_server:
  resources_servers:
    ${SERVER}:
      entrypoint: app.py
      domain: agent
      tool_call_comparator_config:
        word_count_similarity_threshold: 0.1
      verified: false
      description: task data validation test
      datasets:
        - name: actions
          type: train
          jsonl_fpath: data/actions.jsonl
          num_repeats: 1
          license: TBD
`;

let binDir: string;
let gymDir: string;
let schemaText: string;
/** The fixture rows, each with the request a task row needs. */
let rows: string[];

before(async () => {
  binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh'), '0.7.0'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  rows = readFileSync(ROWS, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.stringify({ responses_create_params: { input: 'hi' }, ...(JSON.parse(l) as object) }));
  gymDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-gym070-'));
  mkdirSync(path.join(gymDir, 'data'));
  writeFileSync(path.join(gymDir, 'data/actions.jsonl'), rows.map((r) => `${r}\n`).join(''));
  writeFileSync(path.join(gymDir, 'gym.yaml'), GYM_CONFIG);
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}` };
  const schema = await promisify(execFile)(path.join(binDir, 'gym'), ['env', 'schema', '--resources-server', SERVER], {
    cwd: gymDir,
    env,
  });
  schemaText = schema.stdout;
});

after(() => {
  rmSync(gymDir, { recursive: true, force: true });
  removeBaseDirs();
});

async function prepareData(mode: string): Promise<{ code: number; output: string }> {
  const args = [
    '+config_paths=[gym.yaml]',
    `+output_dirpath=out-${mode}`,
    '+mode=train_preparation',
    '+should_download=false',
    `+task_data_validation=${mode}`,
  ];
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}` };
  try {
    const { stdout, stderr } = await promisify(execFile)(path.join(binDir, 'ng_prepare_data'), args, {
      cwd: gymDir,
      env,
      maxBuffer: 1 << 24,
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** 0.7.0's summary: failed rows as 1-based lines, and its "E/R rows failed" counts. */
function gymVerdict(output: string) {
  const counts = /(\d+)\/(\d+) rows failed task_data validation/.exec(output);
  const lines = [...output.matchAll(/^ {2}row (\d+): /gm)].map((m) => Number(m[1]) + 1);
  return { counts: counts ? [Number(counts[1]), Number(counts[2])] : undefined, lines };
}

function ourVerdict(stderr: string) {
  const findings = stderr.split('\n').filter((l) => l.includes('fails the task_data schema'));
  const lines = findings.flatMap((l) => /tasks\.jsonl:(\d+): /.exec(l)?.[1] ?? []).map(Number);
  const more = /\.\.\. and \d+ more rows fail the task_data schema .* \((\d+) of (\d+)\)/.exec(stderr);
  return { counts: more ? [Number(more[1]), Number(more[2])] : undefined, lines };
}

for (const mode of TASK_DATA_VALIDATION_MODES) {
  test(`task_data_validation ${mode}: ng_prepare_data 0.7.0 and check agree`, async () => {
    const gym = await prepareData(mode);
    const dir = baseDirWith(
      {
        name: 'gym070_task_data',
        servers: { mode: 'embedded' },
        collect: {
          input_jsonl: 'data/tasks.jsonl',
          agent_name: 'demo_tool_agent',
          task_data_schema: 'data/schema.json',
          task_data_validation: mode,
        },
      },
      rows,
    );
    writeFileSync(path.join(dir, 'data/schema.json'), schemaText);
    const ours = await check(dir, {});
    assert.equal(ours.code !== 0, gym.code !== 0, `refused: ours ${ours.code}, 0.7.0 ${gym.code}\n${gym.output}`);
    const theirs = gymVerdict(gym.output);
    assert.equal(gym.output.includes('[task_data validation]') || gym.code !== 0, theirs.lines.length > 0);
    assert.deepEqual(ourVerdict(ours.stderr), theirs);
    if (mode !== 'off') assert.deepEqual(theirs.counts, [7, 11], gym.output);
  });
}
