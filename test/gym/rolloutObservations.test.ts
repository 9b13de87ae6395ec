import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { computeAggregateMetrics, rolloutDigest, stripForAggregateMetrics } from '../../gym/aggregateMetrics';
import { convertToCandidates } from '../../gym/convert';
import { jsonText } from '../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../gym/kindedJson';
import { ROLLOUT_OBSERVATION_FIELDS } from '../../gym/rolloutObservations';
import { fixturesDir } from '../helpers/fixtures';

// Rollouts from NeMo Gym after 0.4.0 may carry `ng_trajectory`, `ng_model_call_capture` and
// `ng_agent_observations`. They are converted and aggregated exactly as the same rollouts without
// them. NeMo Gym 0.4.0 had no such fields to strip: its /aggregate_metrics entry of such a rollout
// would hold them, which is the documented difference from it (docs/nemo-gym.md).

const ENVS = ['workplace_assistant', 'example_multi_step', 'single_step_tool_use_with_argument_comparison'];
let dir: string;

/** The fields a newer agent adds, with shapes that would mislead a reader: items, numbers, rewards. */
function observations(row: Record<string, any>, i: number): Record<string, unknown> {
  return {
    ng_trajectory: {
      task_id: String(row._ng_task_index ?? i),
      rollout_id: `${i}`,
      turns: [{ turn_no: 0, timestamp: 1.5, items: row.response?.output ?? [] }],
      tool_calls: [{ name: 'x', status: 'ok', output: '{"reward": 0}' }],
      model_calls: [{ request: row.responses_create_params, response: row.response }],
      gaps: [],
    },
    ng_model_call_capture: {
      rollout_id: `${i}`,
      metrics: { latency_s: 0.25, reward: 0.0 },
      calls: [{ request: {}, response: { usage: { input_tokens: 9 } } }],
    },
    ng_agent_observations: {
      records: [{ kind: 'invocation', invocation_id: 'a' }],
      gaps: [{ code: 'multimodal_history_redacted' }],
    },
  };
}

function lines(env: string): string[] {
  return readFileSync(path.join(fixturesDir, 'gym', env, 'example_rollouts.jsonl'), 'utf8')
    .trimEnd()
    .split('\n');
}

/** A rollout line with the fields added, as a newer NeMo Gym writes it (they come after the result's own). */
function withObservations(line: string, i: number): string {
  const fields = JSON.stringify(observations(JSON.parse(line), i));
  return `${line.slice(0, -1)}, ${fields.slice(1)}`;
}

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-observations-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('convert: a rollout with the observability fields gives the same candidates, audit and metrics', async () => {
  for (const env of ENVS) {
    const out: Record<string, string[]> = {};
    for (const variant of ['plain', 'observed']) {
      const root = path.join(dir, env, variant);
      mkdirSync(root, { recursive: true });
      const text = lines(env)
        .map((l, i) => (variant === 'plain' ? l : withObservations(l, i)))
        .join('\n');
      writeFileSync(path.join(root, 'rollouts.jsonl'), `${text}\n`);
      const summary = await convertToCandidates({
        inputs: [path.join(root, 'rollouts.jsonl')],
        outDir: path.join(root, 'out'),
        sourceRoot: root,
        agent_name: 'pivot_agent',
      });
      // The metrics name the input file by its absolute path, which differs between the two.
      out[variant] = [summary.candidatesPath, summary.skippedPath, summary.metricsPath].map((f) =>
        readFileSync(f, 'utf8').replaceAll(root, '<root>'),
      );
    }
    assert.ok(out.plain![0]!.length > 0 || out.plain![1]!.length > 0, env);
    assert.deepEqual(out.observed, out.plain, env);
    assert.equal(out.observed!.join('').includes('ng_trajectory'), false);
  }
});

test('aggregate metrics: the /aggregate_metrics entry and the digest are those of the rollout without the fields', () => {
  for (const env of ENVS) {
    const plain = lines(env).map((l) => parseKinded(l).kinded as JsonDict);
    const observed = lines(env).map((l, i) => parseKinded(withObservations(l, i)).kinded as JsonDict);
    observed.forEach((row, i) => {
      assert.equal(
        jsonText(stripForAggregateMetrics(row)),
        jsonText(stripForAggregateMetrics(plain[i]!)),
        `${env} line ${i + 1}`,
      );
      assert.equal(rolloutDigest(row), rolloutDigest(plain[i]!));
      // NeMo Gym 0.4.0 stripped only `response` (keeping its usage) and `responses_create_params`.
      const stripped040 = Object.keys(JSON.parse(withObservations(lines(env)[i]!, i))).filter(
        (k) => k !== 'response' && k !== 'responses_create_params',
      );
      assert.deepEqual(
        Object.keys(JSON.parse(jsonText(stripForAggregateMetrics(row)))).filter((k) => k !== 'response'),
        stripped040.filter((k) => !ROLLOUT_OBSERVATION_FIELDS.has(k)),
      );
    });
    // Keyed as collection keys them (not every fixture line carries its keys).
    const keyed = (r: JsonDict, i: number) => ({
      _ng_task_index: i,
      _ng_rollout_index: 0,
      ...JSON.parse(jsonText(stripForAggregateMetrics(r))),
    });
    const plainRows = plain.map(keyed);
    const observedRows = observed.map(keyed);
    assert.deepEqual(computeAggregateMetrics(observedRows), computeAggregateMetrics(plainRows), env);
  }
});
