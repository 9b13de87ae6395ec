import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { writeRewardProfile } from '../../../gym/rewardProfile';
import { random } from '../../helpers/random';

// Files in key order are profiled a task at a time (gym/rewardProfile/stream.ts), any others in
// tables (profile.ts). The two must write the same bytes: here the same rows are profiled once in key
// order and once shuffled, on generated runs with what changes the output (float and int kinds, a
// column some rollouts lack, bools, usage over top-level fields, several agents, partial runs).

const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-stream-'));
after(() => rmSync(root, { recursive: true, force: true }));
let serial = 0;

interface Run {
  inputs: string[];
  rollouts: string[];
}

function generatedRun(seed: number): Run & { partial: boolean } {
  const next = random(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const agents = ['beta', 'alpha', 'Zed'].slice(0, 1 + Math.floor(next() * 3));
  const floatReward = next() < 0.5;
  const partial = next() < 0.3;
  const inputs: string[] = [];
  const rollouts: string[] = [];
  const tasks = 1 + Math.floor(next() * 6);
  for (let task = 0; task < tasks; task++) {
    const agent = pick(agents);
    const repeats = 1 + Math.floor(next() * 4);
    for (let rollout = 0; rollout < repeats; rollout++) {
      inputs.push(
        `{"responses_create_params":{"input":"q${task}","temperature":1.0},"agent_ref":{"name":"${agent}"},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`,
      );
      if (partial && next() < 0.3) continue;
      const reward = next() < 0.5 ? 1 : 0;
      const fields = [
        `"reward":${floatReward ? `${reward}.0` : reward}`,
        next() < 0.8 ? `"passed":${reward === 1}` : '',
        next() < 0.7 ? `"score":${pick(['0.25', '3', '1e-3', '7.5'])}` : '',
        `"input_tokens":${Math.floor(next() * 500)}`,
      ].filter((f) => f !== '');
      const usage =
        next() < 0.8
          ? `{"input_tokens":${Math.floor(next() * 900)},"output_tokens":${pick(['12', '40.0', '7'])}}`
          : 'null';
      rollouts.push(
        `{"responses_create_params":{"input":"q${task}"},"response":{"output":[],"usage":${usage}},${fields.join(',')},"agent_ref":{"name":"${agent}"},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`,
      );
    }
  }
  return { inputs, rollouts, partial };
}

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const next = random(seed);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function profiled(run: Run, partial: boolean): Promise<string[]> {
  const dir = path.join(root, `run${serial++}`);
  mkdirSync(dir);
  const materializedInputsPath = path.join(dir, 'rollouts_materialized_inputs.jsonl');
  const rolloutsPath = path.join(dir, 'rollouts.jsonl');
  writeFileSync(materializedInputsPath, run.inputs.map((l) => `${l}\n`).join(''));
  writeFileSync(rolloutsPath, run.rollouts.map((l) => `${l}\n`).join(''));
  try {
    const out = await writeRewardProfile({ materializedInputsPath, rolloutsPath, allowPartialRollouts: partial });
    return [
      readFileSync(out.rewardProfilingPath, 'utf8'),
      readFileSync(out.agentMetricsPath, 'utf8'),
      JSON.stringify(out.summary),
    ];
  } catch (err) {
    return [`error: ${(err as Error).message}`];
  }
}

test('in key order or shuffled, 200 generated runs profile to the same bytes', async () => {
  for (let seed = 1; seed <= 200; seed++) {
    const run = generatedRun(seed);
    const inOrder = await profiled(run, run.partial);
    const mixed = await profiled(
      { inputs: shuffled(run.inputs, seed), rollouts: shuffled(run.rollouts, seed + 1000) },
      run.partial,
    );
    assert.deepEqual(inOrder, mixed, `seed ${seed}`);
  }
});

test("missing and extra rollouts stop both with upstream's messages, naming the same keys", async () => {
  const run = generatedRun(7);
  const missing = { inputs: run.inputs, rollouts: run.rollouts.slice(1) };
  const [inOrder] = await profiled(missing, false);
  assert.match(
    inOrder!,
    /^error: Materialized input rows and rollout results do not have matching rollout keys\. Missing rollout results for 1 materialized input rows\. Missing rollout keys: \[\(0, 0\)\]/,
  );
  assert.deepEqual(
    await profiled({ inputs: shuffled(missing.inputs, 3), rollouts: shuffled(missing.rollouts, 4) }, false),
    [inOrder],
  );
  const extra = { inputs: run.inputs.slice(1), rollouts: run.rollouts };
  const [extraInOrder] = await profiled(extra, true);
  assert.match(
    extraInOrder!,
    /^error: Rollout results contain rows with no matching materialized input rows\. Found 1 extra rollout rows\. Extra rollout keys: \[\(0, 0\)\]$/,
  );
  assert.deepEqual(await profiled({ inputs: shuffled(extra.inputs, 5), rollouts: shuffled(extra.rollouts, 6) }, true), [
    extraInOrder,
  ]);
});

/** Files this process holds open (Linux): a reader left unfinished keeps its file open until GC. */
const openFiles = () => readdirSync('/proc/self/fd').length;

test('rollouts in completion order leave no file open once profiled', async () => {
  const run = generatedRun(11);
  const inOrder = await profiled(run, run.partial);
  const before = openFiles();
  // NeMo Gym writes rollouts as they complete: the key-ordered read stops at the first step back.
  const mixed = await profiled({ inputs: run.inputs, rollouts: [...run.rollouts].reverse() }, run.partial);
  assert.deepEqual(mixed, inOrder);
  assert.equal(openFiles(), before);
});
