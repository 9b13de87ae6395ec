import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ensureNemoGym, runNemoGymCommand } from '../../scripts/lib/nemoGym';
import { stageAccounting } from '../../activities/stage/rolloutAccounting';
import type { RolloutAccounting } from '../../gym/rolloutAccounting';
import { collectPlan, materialize, merge, outPrefixOf, runChunks } from '../activities/fakeGym';
import type { CollectServers } from './collect070Servers';
import { readCollected, type Collected } from './collect070Lines';

// NeMo Gym 0.7.0's `ng_collect_rollouts` and our collect stage on the same task rows, against the
// same servers (collect070Servers.ts), and what each wrote side by side (collect070Lines.ts), for
// tests of 0.7.0's collection options; 0.7.0's `ng_reward_profile` on what ours wrote.

/** What both collections are asked for; `options` are the 0.7.0 option names and values, as in our collect config. */
type OptionValue = boolean | number | string | string[];

export interface Collection {
  rowsFile: string;
  numRepeats: number | Record<string, number>;
  /** Both collections are told the stack's agent as `agent_name` unless this is set. */
  withoutAgentName?: boolean;
  options: Record<string, OptionValue | Record<string, OptionValue>>;
  /** Rows carry `_ng_environment_server` from materialization (`environment_routing_mode: legacy`). */
  stamped?: boolean;
  /** What both must stop with once their files are written (`require_complete`); both succeed without it. */
  stopsWith?: RegExp;
}

/** An option's value as a Hydra override writes it: a list as `[a,b]`, a dict as `{k:v}`. */
function hydraValue(value: Collection['options'][string]): string {
  if (Array.isArray(value)) return `[${value.join(',')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}:${hydraValue(v)}`)
      .join(',')}}`;
  return String(value);
}

/** 0.7.0's `ng_collect_rollouts` one rollout at a time (so its file is in dispatch order); resolves to its output prefix and what it printed. */
export async function collectWith070(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<{ prefix: string; output: string }> {
  const prefix = path.join(dir, 'theirs', 'rollouts');
  mkdirSync(path.dirname(prefix), { recursive: true });
  const run = await runNemoGymCommand(
    ensureNemoGym('0.7.0'),
    'ng_collect_rollouts',
    [
      `+input_jsonl_fpath=${c.rowsFile}`,
      `+output_jsonl_fpath=${prefix}.jsonl`,
      ...(c.withoutAgentName ? [] : [`+agent_name=${servers.stack.names.agent}`]),
      `+num_repeats=${hydraValue(c.numRepeats)}`,
      '+num_repeats_add_seed=true',
      '+num_samples_in_parallel=1',
      '+disable_health_check=true',
      `+head_server={host:127.0.0.1,port:${servers.head.port}}`,
      ...Object.entries(c.options).map(([key, value]) => `+${key}=${hydraValue(value)}`),
    ],
    path.dirname(prefix),
  );
  if (c.stopsWith) {
    assert.notEqual(run.code, 0, 'ng_collect_rollouts should have failed');
    assert.match(run.output, c.stopsWith);
  } else assert.equal(run.code, 0, run.output.slice(-3000));
  return { prefix, output: run.output };
}

/** Our collect stage's activities on the same rows and servers; resolves to its output prefix. */
export async function collectWithPivotMiner(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<{ prefix: string; accounting: RolloutAccounting }> {
  const baseDir = path.join(dir, 'ours');
  mkdirSync(baseDir, { recursive: true });
  copyFileSync(c.rowsFile, path.join(baseDir, 'tasks.jsonl'));
  const plan = collectPlan(
    baseDir,
    { head_url: servers.head.url },
    {
      agent_name: c.withoutAgentName ? undefined : servers.stack.names.agent,
      num_repeats: c.numRepeats,
      seed_per_repeat: true,
      chunk_size: 3,
      // 0.7.0 makes one attempt at a rollout per run: its retries are resumes.
      max_attempts: 1,
      ...c.options,
    },
  );
  await runChunks(plan, (await materialize(plan)).chunks);
  if (c.stopsWith) await assert.rejects(merge(plan), c.stopsWith);
  else await merge(plan);
  const prefix = outPrefixOf(plan);
  return { prefix, accounting: await stageAccounting({ plan, stage: 'collect', outPrefix: prefix }) };
}

/** Both collections of `c`, asserting they wrote the same; resolves to what ours wrote and counted, and what 0.7.0 printed. */
export async function assertSameCollection(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<Collected & { prefix: string; accounting: RolloutAccounting; printed070: string }> {
  const run070 = await collectWith070(servers, dir, c);
  const theirs = readCollected(run070.prefix, '0.7.0', c.stamped);
  const run = await collectWithPivotMiner(servers, dir, c);
  const ours = readCollected(run.prefix, 'pivot-miner');
  assert.equal(ours.materializedInputs, theirs.materializedInputs, 'materialized inputs');
  assert.deepEqual(ours.rollouts, theirs.rollouts, 'rollouts, in order');
  assert.deepEqual(ours.failures, theirs.failures, 'failures sidecar');
  assert.deepEqual(ours.aggregateMetrics, theirs.aggregateMetrics, 'aggregate metrics');
  return { ...ours, prefix: run.prefix, accounting: run.accounting, printed070: run070.output };
}

const PROFILE_FILES = ['_agent_metrics.json', '_repeat_level_metrics.json', '_reward_profiling.jsonl'];

/**
 * 0.7.0's `ng_reward_profile` (partial, as our collect profiles) on the rollouts and materialized
 * inputs our collect wrote at `prefix`, asserting it writes our three profile files byte for byte.
 */
export async function assertSameProfile(prefix: string): Promise<void> {
  const dir = `${prefix}_profiled_by_070`;
  mkdirSync(dir);
  const rollouts = path.join(dir, 'rollouts.jsonl');
  copyFileSync(`${prefix}.jsonl`, rollouts);
  const run = await runNemoGymCommand(
    ensureNemoGym('0.7.0'),
    'ng_reward_profile',
    [
      `+materialized_inputs_jsonl_fpath=${prefix}_materialized_inputs.jsonl`,
      `+rollouts_jsonl_fpath=${rollouts}`,
      '++allow_partial_rollouts=True',
    ],
    dir,
  );
  assert.equal(run.code, 0, run.output.slice(-3000));
  for (const file of PROFILE_FILES)
    assert.equal(
      readFileSync(`${prefix}${file}`, 'utf8'),
      readFileSync(path.join(dir, `rollouts${file}`), 'utf8'),
      file,
    );
}
