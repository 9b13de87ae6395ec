import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { claimStageFence } from '../../activities/chunk/fence';
import { writeAggregateMetrics } from '../../activities/stage/aggregateMetrics';
import { aggregateMetrics070 } from '../../gym/aggregateMetrics070';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import { AggregateMetricsWriter } from '../../gym/aggregateMetricsFile';
import { loadsPythonJson } from '../../gym/pythonJson';
import { orjsonDumps } from '../../gym/pythonJsonDumps';
import { qualitySummaryJson, runHealthChecks } from '../../gym/healthChecks';
import { collectPlan } from '../activities/fakeGym';
import { gymEvalAggregate070 } from '../helpers/gymEvalAggregate';

// `<stem>_aggregate_metrics.json` against NeMo Gym 0.7.0's own `gym eval aggregate` (the command
// `ng_aggregate_rollouts` runs), on rollouts chosen for 0.7.0's additions: masked samples (one agent
// masks all of its rollouts), repeats of unequal size, floats that look integral, ints, a tiny float,
// a rollout without `response`, extra numeric fields, two agents in one shard and a task in two shards.

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-eval-aggregate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const rollout = (agent: string, task: number, r: number, reward: string, extra: string, usage: string | null) =>
  `{"responses_create_params":{"input":[{"role":"user","content":"t\u00e9sk ${task}"}]},${usage === null ? '' : `"response":{"output":[],"usage":{${usage}}},`}"reward":${reward}${extra},"agent_ref":{"type":"responses_api_agents","name":"${agent}"},"_ng_task_index":${task},"_ng_rollout_index":${r}}`;

/** A seeded run of `tasks` × `repeats` rollouts of `agent`, some missing or masked, numbers of varied kinds. */
function seeded(agent: string, tasks: number, repeats: number, seed: number): string[] {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lines: string[] = [];
  for (let t = 0; t < tasks; t++) {
    for (let r = 0; r < repeats; r++) {
      const roll = next();
      if (roll < 0.05) continue;
      const reward = roll < 0.5 ? '0.0' : (Math.round(next() * 8) / 8).toFixed(3);
      const extra = `${roll > 0.95 ? ',"mask_sample":true' : ''}${next() < 0.8 ? `,"score":${Math.floor(next() * 5)}` : ''}`;
      const usage = `"input_tokens":${10 + Math.floor(next() * 90)},"output_tokens":${Math.floor(next() * 50)}`;
      lines.push(rollout(agent, t, r, reward, extra, usage));
    }
  }
  return lines;
}

const cases: Record<string, string[][]> = {
  two_agents: [
    [
      rollout('a_agent', 0, 0, '1.0', ',"flag":true,"score":3', '"input_tokens":5,"output_tokens":7'),
      rollout('a_agent', 0, 1, '0.0', ',"score":4', '"input_tokens":6,"output_tokens":7'),
      rollout('a_agent', 1, 0, '0.5', ',"score":4', '"input_tokens":6,"output_tokens":1e-6'),
      rollout('a_agent', 1, 1, '1', ',"score":2,"mask_sample":false', '"input_tokens":2,"output_tokens":3'),
      rollout('masked_agent', 0, 0, '1.0', ',"mask_sample":true', '"input_tokens":1,"output_tokens":1'),
      rollout('masked_agent', 0, 1, '0.0', ',"mask_sample":true', '"input_tokens":1,"output_tokens":2'),
    ],
    [
      rollout('a_agent', 2, 0, '0.25', ',"mask_sample":true,"score":9', '"input_tokens":6,"output_tokens":7'),
      rollout('a_agent', 2, 1, '0.75', '', null),
      rollout('a_agent', 3, 0, '1.0', ',"score":1', '"input_tokens":9,"output_tokens":4'),
      rollout('a_agent', 3, 2, '0.0', ',"score":1', '"input_tokens":3,"output_tokens":2'),
    ],
  ],
  seeded: [
    seeded('pivot_agent', 40, 4, 11),
    seeded('pivot_agent', 40, 4, 12).map((l) =>
      l.replace(/"_ng_task_index":(\d+)/, (_, t) => `"_ng_task_index":${Number(t) + 40}`),
    ),
  ],
};

/** Lines sorted by (task, rollout), as `gym eval aggregate` and a stage's merge order them. */
const keyOrdered = (lines: string[]) => {
  const key = (line: string) => {
    const { _ng_task_index: t, _ng_rollout_index: r } = JSON.parse(line) as Record<string, number>;
    return [t!, r!];
  };
  return [...lines].sort((a, b) => {
    const [[ta, ra], [tb, rb]] = [key(a), key(b)];
    return ta! - tb! || ra! - rb!;
  });
};

/** Entries of an aggregate metrics file as text, sorted: 0.7.0 lists them as its agents answer. */
const entryTexts = (text: string) =>
  text
    .replace(/^\[\n|\n\]$/g, '')
    .split(/(?<=\n {2}\}),\n/)
    .sort();

/** Our file: each agent's lines, in order of first appearance, as the stage writes them. */
async function ours(lines: string[], out: string): Promise<void> {
  const byAgent = new Map<string, string[]>();
  for (const line of lines) {
    const agent = (JSON.parse(line) as { agent_ref: { name: string } }).agent_ref.name;
    byAgent.set(agent, [...(byAgent.get(agent) ?? []), line]);
  }
  const file = await open(out, 'w');
  const writer = new AggregateMetricsWriter(file, out);
  for (const [agent, agentLines] of byAgent) {
    const metrics = aggregateMetrics070(agentLines)!;
    await writer.entry(agent, {
      agentMetrics: metrics.agentMetrics,
      keyMetrics: metrics.keyMetrics,
      groups: metrics.groups,
      gym070: { environmentServer: legacyEnvironmentServerName(agent), repeats: metrics.repeats },
    });
  }
  await writer.close();
  await file.close();
}

for (const [name, shards] of Object.entries(cases)) {
  test(`aggregate metrics = gym eval aggregate 0.7.0's (${name})`, { timeout: 600_000 }, async (t) => {
    const where = path.join(dir, name);
    mkdirSync(where);
    shards.forEach((lines, i) => writeFileSync(path.join(where, `shard${i}.jsonl`), `${lines.join('\n')}\n`));
    const agents = [
      ...new Set(shards.flat().map((l) => (JSON.parse(l) as { agent_ref: { name: string } }).agent_ref.name)),
    ];
    const theirs = path.join(where, 'theirs', 'rollouts.jsonl');
    mkdirSync(path.dirname(theirs));
    await gymEvalAggregate070(path.join(where, 'shard*.jsonl'), theirs, agents);
    const ourPath = path.join(where, 'ours_aggregate_metrics.json');
    await ours(shards.flat(), ourPath);
    const expected = readFileSync(path.join(where, 'theirs', 'rollouts_aggregate_metrics.json'), 'utf8');
    const actual = readFileSync(ourPath, 'utf8');
    assert.deepEqual(entryTexts(actual), entryTexts(expected));
    assert.match(expected, /"repeat_level_metrics": \[\n/);
    // Hydra's run log under outputs/ is no aggregate file.
    const files = readdirSync(path.dirname(theirs)).filter((f) => f !== 'outputs');
    for (const file of files.sort()) {
      const bytes = readFileSync(path.join(path.dirname(theirs), file));
      t.diagnostic(`${file} sha256 ${createHash('sha256').update(bytes).digest('hex')}`);
    }
    assert.deepEqual(files.sort(), [
      'quality_summary.json',
      'rollout_verdicts.jsonl',
      'rollouts.jsonl',
      'rollouts_aggregate_metrics.json',
    ]);
    // The merge: the shards' rollouts in key order, each as our orjson writes the row (as collection
    // writes a shard's lines, which a stage's merge then orders by key).
    const merged = keyOrdered(shards.flat()).map((l) => orjsonDumps(loadsPythonJson(l)));
    assert.equal(readFileSync(theirs, 'utf8'), `${merged.join('\n')}\n`);
    // The health check 0.7.0 runs on the merged file, as each stage runs it on its rollouts.
    const verdictsPath = path.join(where, 'rollout_verdicts.jsonl');
    const summary = await runHealthChecks([theirs], [], { verdictsPath });
    const theirFile = (file: string) => readFileSync(path.join(path.dirname(theirs), file), 'utf8');
    assert.equal(qualitySummaryJson(summary), theirFile('quality_summary.json'));
    assert.equal(readFileSync(verdictsPath, 'utf8'), theirFile('rollout_verdicts.jsonl'));
  });
}

// A merged stage's rollouts come in key order (read a task at a time); others are read into tables.
for (const order of ['key order', 'shuffled']) {
  test(
    `a stage writes the aggregate metrics gym eval aggregate 0.7.0 writes from its rollouts (${order})`,
    { timeout: 600_000 },
    async () => {
      // Local profiling without an agent server: metrics computed in-process, the default profile key.
      const where = path.join(dir, `stage ${order}`);
      const plan = collectPlan(where, { agent_url: 'http://127.0.0.1:9' });
      const rolloutsPath = path.join(plan.runDir, 'local_profile.jsonl');
      const lines = keyOrdered(cases.two_agents!.flat()).map((l) => orjsonDumps(loadsPythonJson(l)));
      const written = order === 'shuffled' ? lines.map((_, i) => lines[(i * 3) % lines.length]!) : lines;
      writeFileSync(rolloutsPath, `${written.join('\n')}\n`);
      const out = (await new MockActivityEnvironment().run(async () =>
        writeAggregateMetrics(
          { plan, stage: 'local_profile', rolloutsPath },
          await claimStageFence(rolloutsPath.replace(/\.jsonl$/, '')),
        ),
      )) as string | undefined;
      assert.ok(out);
      const theirs = path.join(where, 'theirs', 'local_profile.jsonl');
      mkdirSync(path.dirname(theirs));
      await gymEvalAggregate070(rolloutsPath, theirs, ['a_agent', 'masked_agent'], ['+merge_shards=false']);
      const expected = readFileSync(path.join(where, 'theirs', 'local_profile_aggregate_metrics.json'), 'utf8');
      assert.deepEqual(entryTexts(readFileSync(out, 'utf8')), entryTexts(expected));
    },
  );
}
