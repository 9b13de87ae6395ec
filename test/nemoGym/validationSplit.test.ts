import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import type { PivotMiningResult } from '../../contracts/payloads';
import { ensureNemoGym, type NemoGymInstall } from '../../scripts/lib/nemoGym';
import { prepareTrainData } from '../helpers/nemoGymPython';
import { readJsonlSync } from '../helpers/jsonl';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// The demo with issue #49's settings, through Temporal and the embedded servers: the paper's pass-rate
// ceiling, at most 20% message pivots, and a quarter of the source trajectories held out for
// validation. Then NeMo Gym 0.4.0's ng_prepare_data takes the Gym config with both datasets.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-validation-split';
const MAX_PASS_RATE = 0.8;
const MAX_MESSAGE_SHARE = 0.2;
type Row = Record<string, any>;

let install: NemoGymInstall;
let stack: WorkerTestEnv | undefined;
let baseDir: string;
let result: PivotMiningResult;

before(async () => {
  install = ensureNemoGym();
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-split-'));
  const demo = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8'));
  writeFileSync(path.join(baseDir, 'demo_tasks.jsonl'), readFileSync(path.join(repoRoot, demo.collect.input_jsonl)));
  const config = {
    ...demo,
    collect: { ...demo.collect, input_jsonl: 'demo_tasks.jsonl' },
    filter: { ...demo.filter, max_pass_rate: MAX_PASS_RATE, max_share: { message: MAX_MESSAGE_SHARE } },
    publish: { ...demo.publish, validation_fraction: 0.25 },
  };
  writeFileSync(path.join(baseDir, 'split.yaml'), YAML.stringify(config));
  stack = await startWorkerTestEnv(TASK_QUEUE, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
  result = await runPivotMining(stack.env.client, { taskQueue: TASK_QUEUE, configPath: 'split.yaml', runId: 'split' });
});

after(async () => {
  await stack?.stop();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

const trajectoryOf = (row: Row) =>
  JSON.stringify([row.provenance.source_file, row.provenance.task_index, row.provenance.rollout_index]);
const isMessage = (row: Row) => row.expected_action.type === 'message';

test('the demo publishes below the ceiling, within the mix, split by trajectory, and the funnel adds up', (t) => {
  const train = readJsonlSync<Row>(result.pivotsPath);
  const validation = readJsonlSync<Row>(path.join(path.dirname(result.pivotsPath), 'pivots_validation.jsonl'));
  const all = [...train, ...validation];
  assert.ok(train.length > 0 && validation.length > 0, `${train.length} train, ${validation.length} validation`);
  for (const row of all) {
    const rate = row.provenance.local_pass_rate as number;
    assert.ok(rate > 0 && rate < MAX_PASS_RATE, `${row.provenance.uuid}: local_pass_rate ${rate}`);
  }
  for (const rows of [train, validation, all])
    assert.ok(rows.filter(isMessage).length <= MAX_MESSAGE_SHARE * rows.length, 'message share ≤ 0.2');
  const trainTrajectories = new Set(train.map(trajectoryOf));
  const validationTrajectories = new Set(validation.map(trajectoryOf));
  assert.deepEqual(
    [...validationTrajectories].filter((k) => trainTrajectories.has(k)),
    [],
    'no trajectory on both sides',
  );

  const summary = JSON.parse(readFileSync(path.join(result.runDir, 'run_summary.json'), 'utf8'));
  const p = summary.pivots;
  const dropped =
    p.all_pass + p.all_fail + p.constant + p.held_back_incomplete + p.over_ceiling + p.over_budget + p.over_share;
  assert.equal(p.published + dropped, p.candidates);
  assert.equal(p.adds_up, true);
  assert.deepEqual(p.published_by_split, { train: train.length, validation: validation.length });
  assert.ok(p.over_ceiling > 0, 'the ceiling dropped pivots the default would publish');
  const selection = JSON.parse(
    readFileSync(path.join(path.dirname(result.pivotsPath), 'selection_metrics.json'), 'utf8'),
  );
  assert.equal(selection.counts_add_up, true);
  const mix = selection.by_split;
  t.diagnostic(
    `candidates ${p.candidates} = published ${p.published} (train ${train.length} from ${trainTrajectories.size} trajectories, ` +
      `validation ${validation.length} from ${validationTrajectories.size}) + all_pass ${p.all_pass} + all_fail ${p.all_fail} + ` +
      `constant ${p.constant} + incomplete ${p.held_back_incomplete} + over_ceiling ${p.over_ceiling} + ` +
      `over_budget ${p.over_budget} + over_share ${p.over_share}; messages before/after the mix: ` +
      `train ${mix.train.action_mix.before.message}/${mix.train.action_mix.after.message}, ` +
      `validation ${mix.validation.action_mix.before.message}/${mix.validation.action_mix.after.message}; ` +
      `message share ${(all.filter(isMessage).length / all.length).toFixed(3)}; message candidates ` +
      JSON.stringify(selection.by_action_type.message ?? null),
  );
  assert.match(readFileSync(result.reportPath, 'utf8'), /\(adds up\)/);
});

test('ng_prepare_data (NeMo Gym 0.4.0) accepts the Gym config with a train and a validation dataset', async () => {
  const config = YAML.parse(readFileSync(result.gymConfigPath, 'utf8'));
  const agent = Object.values(config).find((block: any) => block.responses_api_agents) as Row;
  const datasets = (Object.values(agent.responses_api_agents)[0] as Row).datasets as Row[];
  assert.deepEqual(
    datasets.map((d) => d.type),
    ['train', 'validation'],
  );
  const out = path.join(baseDir, 'prepared');
  const prepared = await prepareTrainData(install, result.gymConfigPath, out, baseDir);
  assert.equal(prepared.code, 0, prepared.output.slice(-3000));
  for (const [type, file] of [
    ['train', result.pivotsPath],
    ['validation', path.join(path.dirname(result.pivotsPath), 'pivots_validation.jsonl')],
  ]) {
    assert.equal(readJsonlSync(path.join(out, `${type}.jsonl`)).length, readJsonlSync(file).length, type);
  }
  assert.doesNotMatch(prepared.output, /conflict/i, 'our per-dataset metrics files are what NeMo Gym computes');
});
