import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import type { writeAggregateMetrics } from '../../../activities/stage/aggregateMetrics';
import { mergedPaths } from '../../../activities/chunk/chunkIndex';
import { rolloutDigest } from '../../../gym/aggregateMetrics';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';
import { startEmbeddedStack } from '../../../servers/embeddedStack';
import { runNemoGymPython } from '../../helpers/nemoGymPython';
import { collectPlan, materialize, merge, outPrefixOf, runChunks, fakeGymForFile, writeJsonl } from '../fakeGym';
import { GYM_040, aggregate, type Row } from './aggregateMetricsSetup';

// `<stem>_aggregate_metrics.json` equal to what NeMo Gym's own code writes from the same rollouts:
// its agent's answer in-process, and `ng_aggregate_rollouts` on a stage's file. These tests hold the
// pipeline to 0.4.0 (`profile.nemo_gym_version`), whose venv they run;
// test/nemoGym/evalAggregateBytes.test.ts checks 0.7.0's file, the default. How the metrics are asked
// for is in aggregateMetricsAgents.test.ts.

const repoRoot = path.resolve(__dirname, '../../..');
const { freshDir } = fakeGymForFile({}, 'pivot-miner-aggregate-');

test(
  "in-process metrics are written with the bytes NeMo Gym writes from its agent's answer",
  { timeout: 180_000 },
  async () => {
    const dir = freshDir();
    const plan = collectPlan(dir, { agent_url: 'http://127.0.0.1:9' }, {}, GYM_040);
    const rolloutsPath = path.join(plan.runDir, 'local_profile.jsonl');
    // Python's types decide the bytes: float rewards that look integral, int and float usage, a bool,
    // a column one rollout lacks (pandas then makes every max/min a float) and an orjson exponent.
    const line = (task: number, rollout: number, reward: string, extra: string, usage: string) =>
      `{"_ng_task_index":${task},"_ng_rollout_index":${rollout},"agent_ref":{"name":"pivots"},"responses_create_params":{"input":[]},` +
      `"response":{"output":[],"usage":{${usage}}},"reward":${reward}${extra}}`;
    const lines = [
      line(0, 0, '1.0', ',"passed":true', '"input_tokens":5,"output_tokens":7'),
      line(0, 1, '0.0', ',"passed":false,"score":0.5', '"input_tokens":6,"output_tokens":7'),
      line(1, 0, '1.0', ',"passed":true', '"input_tokens":6,"output_tokens":1e-6'),
    ];
    writeFileSync(rolloutsPath, `${[lines[2], lines[0], lines[1]].join('\n')}\n`);
    const input: Parameters<typeof writeAggregateMetrics>[0] = { plan, stage: 'local_profile', rolloutsPath };
    const out = await aggregate(input);
    // NeMo Gym's side: the stripped results sent as JSON, its agent's answer as JSON, and the file as
    // `_call_aggregate_metrics` writes it.
    const script = [
      'import json, sys, orjson',
      'from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest',
      'from nemo_gym.reward_profile import compute_aggregate_metrics',
      'results = [orjson.loads(l) for l in sys.stdin.read().splitlines()]',
      'stripped = []',
      'for r in results:',
      '    entry = {k: v for k, v in r.items() if k not in ("response", "responses_create_params")}',
      '    usage = (r.get("response") or {}).get("usage")',
      '    if usage: entry["response"] = {"usage": usage}',
      '    stripped.append(entry)',
      'request = json.loads(AggregateMetricsRequest(verify_responses=stripped).model_dump_json())',
      'answer = AggregateMetrics.model_validate(json.loads(compute_aggregate_metrics(request["verify_responses"]).model_dump_json()))',
      'entry = {"agent_ref": {"name": "pivots"}, "agent_metrics": answer.agent_metrics, "key_metrics": answer.key_metrics, "group_level_metrics": answer.group_level_metrics}',
      'sys.stdout.buffer.write(orjson.dumps([entry], option=orjson.OPT_INDENT_2))',
    ].join('\n');
    const theirs = await runNemoGymPython(script, lines.join('\n'));
    assert.match(theirs, /"mean\/reward": 0\.6666666666666666,/);
    assert.equal(out, path.join(plan.runDir, 'local_profile_aggregate_metrics.json'));
    assert.equal(readFileSync(path.join(plan.runDir, 'local_profile_aggregate_metrics.json'), 'utf8'), theirs);

    // A merged stage has digests beside its rollouts, and only they are read then.
    const { digestsPath } = mergedPaths(rolloutsPath.replace(/\.jsonl$/, ''));
    mkdirSync(path.dirname(digestsPath), { recursive: true });
    writeFileSync(
      digestsPath,
      [lines[2]!, lines[0]!, lines[1]!].map((l) => `${rolloutDigest(parseKinded(l).kinded as JsonDict)}\n`).join(''),
    );
    writeFileSync(rolloutsPath, 'not JSON\n');
    await aggregate(input);
    assert.equal(readFileSync(path.join(plan.runDir, 'local_profile_aggregate_metrics.json'), 'utf8'), theirs);
  },
);

test(
  "NeMo Gym's ng_aggregate_rollouts accepts the pipeline's rollouts and writes the same metrics",
  { timeout: 180_000 },
  async () => {
    const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh')], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .at(-1)!;
    const dir = freshDir();
    const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8').split('\n').slice(0, 3);
    writeJsonl(
      path.join(dir, 'tasks.jsonl'),
      tasks.map((t) => JSON.parse(t)),
    );
    const stack = await startEmbeddedStack({ seed: 7, log: () => undefined });
    try {
      const plan = collectPlan(
        dir,
        { head_url: stack.urls.head },
        { agent_name: stack.names.agent, num_repeats: 2 },
        GYM_040,
      );
      await runChunks(plan, (await materialize(plan)).chunks);
      await merge(plan);
      const ngDir = path.join(dir, 'nemo_gym');
      mkdirSync(ngDir);
      await promisify(execFile)(
        path.join(binDir, 'ng_aggregate_rollouts'),
        [
          `+input_glob=${outPrefixOf(plan)}.jsonl`,
          `+output_jsonl_fpath=${path.join(ngDir, 'rollouts.jsonl')}`,
          '+merge_shards=false',
          '+head_server.host=127.0.0.1',
          `+head_server.port=${new URL(stack.urls.head).port}`,
        ],
        { cwd: ngDir, env: { ...process.env, WANDB_MODE: 'disabled' } },
      );
      const theirs = JSON.parse(readFileSync(path.join(ngDir, 'rollouts_aggregate_metrics.json'), 'utf8')) as Row[];
      const ours = JSON.parse(readFileSync(`${outPrefixOf(plan)}_aggregate_metrics.json`, 'utf8')) as Row[];
      assert.equal(ours[0]!.group_level_metrics.length, 3);
      assert.deepEqual(ours, theirs);
    } finally {
      await stack.close();
    }
  },
);
