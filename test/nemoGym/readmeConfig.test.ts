import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import {
  ensureNemoGym,
  ngRunHeadPort,
  startNgRun,
  type NemoGymInstall,
  type RunningNgRun,
} from '../../scripts/lib/nemoGym';
import { startPolicyModelServer } from '../../servers/policyModel';
import type { RunningServer } from '../../servers/http';
import { runCli } from '../helpers/cli';

// README's "A minimal config" as a user would use it: NeMo Gym 0.4.0's `ng_run` serving its
// single_step_tool_use_with_argument_comparison environment and an openai_model named policy_model
// (pointed at our seeded policy simulator, as no LLM runs here), NeMo Gym's own example task rows,
// and `pivot-miner check` on the README block with nothing changed but the head server's port
// (a fixed port would collide with other runs on the machine).

const repoRoot = path.resolve(__dirname, '../..');
const AGENT = 'single_step_tool_use_with_argument_comparison_agent';

let install: NemoGymInstall;
let baseDir: string;
let policy: RunningServer;
let ngRun: RunningNgRun;

before(async () => {
  install = ensureNemoGym();
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-readme-config-'));
  policy = await startPolicyModelServer({ seed: 7, host: '127.0.0.1', port: 0 });
  ngRun = await startNgRun(install, {
    configPaths: [
      'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
      'responses_api_models/openai_model/configs/openai_model.yaml',
    ],
    headPort: await ngRunHeadPort(),
    overrides: [`+policy_base_url=${policy.url}/v1`, '+policy_api_key=unused', '+policy_model_name=simulated-policy'],
    cwd: baseDir,
    logFile: path.join(baseDir, 'ng_run.log'),
    readyTimeoutMs: 1_500_000,
  });
});

after(async () => {
  await ngRun?.stop();
  await policy?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

/** The yaml block under README's "## A minimal config" heading. */
function readmeMinimalConfig(): string {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## A minimal config'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'README has a yaml block under "## A minimal config"');
  return block[1]!;
}

function check(configFile: string) {
  return runCli(['check', '-c', configFile], { cwd: baseDir, env: { PIVOT_MINER_BASE_DIR: baseDir } });
}

test("README's minimal config passes pivot-miner check against a real ng_run", { timeout: 1_800_000 }, async () => {
  const doc = YAML.parseDocument(readmeMinimalConfig());
  assert.equal(doc.getIn(['servers', 'mode']), 'attach');
  doc.setIn(['servers', 'head_url'], ngRun.headUrl);
  writeFileSync(path.join(baseDir, 'my_pivots.yaml'), doc.toString());
  const taskRows = path.join(
    install.sitePackages,
    'resources_servers/single_step_tool_use_with_argument_comparison/data/example.jsonl',
  );
  mkdirSync(path.join(baseDir, 'data'));
  copyFileSync(taskRows, path.join(baseDir, doc.getIn(['collect', 'input_jsonl']) as string));
  const rows = readFileSync(taskRows, 'utf8').trimEnd().split('\n').length;

  const passed = await check('my_pivots.yaml');
  assert.equal(passed.code, 0, passed.stderr);
  assert.match(passed.stdout, new RegExp(`agents +${AGENT}\n`));
  assert.match(passed.stdout, new RegExp(`rollouts +${rows * 4} \\(${rows} rows × num_repeats 4\\)`));
  assert.match(passed.stdout, /^ok: nothing a run would refuse$/m);

  // Without the README's seed_per_repeat: false, NeMo Gym's own rows ("metadata": null) are refused, as
  // ng_collect_rollouts refuses them with num_repeats_add_seed.
  doc.deleteIn(['collect', 'seed_per_repeat']);
  writeFileSync(path.join(baseDir, 'seeded.yaml'), doc.toString());
  const seeded = await check('seeded.yaml');
  assert.equal(seeded.code, 1);
  assert.match(seeded.stderr, /data\/tasks\.jsonl:1: responses_create_params\.metadata must be an object/);

  // The README config with a row routed to an agent ng_run does not serve: named by file and line.
  // agent_name re-routes every row (NeMo Gym 0.7.0), so the row gets there through agent_map.
  const lines = readFileSync(taskRows, 'utf8').trimEnd().split('\n');
  const row = JSON.parse(lines[0]!) as Record<string, unknown>;
  lines.push(JSON.stringify({ ...row, agent_ref: { type: 'responses_api_agents', name: 'old_agent' } }));
  writeFileSync(path.join(baseDir, 'data/tasks.jsonl'), lines.map((l) => `${l}\n`).join(''));
  doc.setIn(['collect', 'seed_per_repeat'], false);
  doc.setIn(['collect', 'agent_map'], { old_agent: 'absent_agent' });
  writeFileSync(path.join(baseDir, 'my_pivots.yaml'), doc.toString());
  const refused = await check('my_pivots.yaml');
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    new RegExp(`data/tasks\\.jsonl:${lines.length}: agent_ref\\.name "absent_agent" is not an agent the servers know`),
  );
  assert.match(refused.stderr, new RegExp(`known: "${AGENT}"`));
});
