import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { TestContext } from 'node:test';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PublishOptions } from '../../gym/publishOptions';

// The publish tests' inputs: seven candidates with local reward profiles that land in each outcome.

/** A fresh directory under the OS temp dir, removed when the test ends. */
export async function publishDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const tools = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'Weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
    strict: true,
  },
  {
    type: 'function',
    name: 'book_flight',
    description: 'Book',
    parameters: { type: 'object', properties: { to: { type: 'string' } } },
    strict: true,
  },
];

export function candidate(
  i: number,
  action: Record<string, unknown>,
  depth: number,
  sourceReward = 1.0,
): Record<string, unknown> {
  return {
    responses_create_params: {
      input: [{ role: 'user', content: `task ${i}: please help` }],
      tools,
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: action,
    agent_ref: { type: 'responses_api_agents', name: 'source_agent' },
    provenance: {
      source_file: 'rollouts.jsonl',
      source_line: i + 1,
      task_index: i,
      rollout_index: 0,
      source_reward: sourceReward,
      pivot_index: 0,
      depth,
      trajectory_length: 3,
      uuid: `uuid-${String(9 - i).padStart(2, '0')}`,
    },
    category: 'synthetic',
  };
}

export const call = (name: string, args: Record<string, unknown>) => ({
  type: 'function_call',
  name,
  arguments: JSON.stringify(args),
});

// Candidate i → rewards of its K = 4 local samples (null: no profile row at all).
const plan: [Record<string, unknown>, number, number[] | null, number?][] = [
  [call('get_weather', { city: 'Paris' }), 0, [1, 0, 1, 0]], // 0 mixed 0.5
  [call('get_weather', { city: 'Rome' }), 1, [1, 1, 1, 1]], // 1 all_pass
  [{ type: 'message', content: 'Done.' }, 2, [0, 0, 0, 0]], // 2 all_fail
  [call('book_flight', { to: 'NYC' }), 3, [1, 1, 1, 0]], // 3 mixed 0.75 (easiest: over budget)
  [call('book_flight', { to: 'SFO' }), 5, [1, 0], 4], // 4 incomplete (2 of 4 missing)
  [call('get_weather', { city: 'Oslo' }), 9, null], // 5 incomplete (no profile row)
  [{ type: 'message', content: 'Here you go.' }, 0, [0, 0, 0, 1]], // 6 mixed 0.25
];

export function profileRow(taskIndex: number, rewards: number[], expected: number): Record<string, unknown> {
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return {
    _ng_task_index: taskIndex,
    'mean/reward': mean,
    'max/reward': Math.max(...rewards),
    'min/reward': Math.min(...rewards),
    sample: { responses_create_params: { input: [] } },
    num_rollouts: rewards.length,
    expected_num_rollouts: expected,
    missing_num_rollouts: expected - rewards.length,
    reward_profile_completion_pct: (100 * rewards.length) / expected,
    rollout_infos: rewards.map((reward, r) => ({ rollout_id: `${taskIndex}:${r}`, reward })),
  };
}

export async function writeInputs(dir: string): Promise<PublishOptions> {
  const candidatesPath = path.join(dir, 'candidates.jsonl');
  const localProfilePath = path.join(dir, 'local_reward_profiling.jsonl');
  const skippedPath = path.join(dir, 'candidates_skipped.jsonl');
  const convertMetricsPath = path.join(dir, 'candidates_metrics.json');
  await writeFile(
    candidatesPath,
    plan.map(([action, depth], i) => `${JSON.stringify(candidate(i, action, depth, i === 6 ? 0.5 : 1.0))}\n`).join(''),
  );
  await writeFile(
    localProfilePath,
    plan
      .map(([, , rewards, expected], i) =>
        rewards ? `${JSON.stringify(profileRow(i, rewards, expected ?? rewards.length))}\n` : '',
      )
      .join(''),
  );
  await writeFile(
    skippedPath,
    ['parallel_tool_calls', 'parallel_tool_calls', 'malformed_trajectory']
      .map((reason) => `${JSON.stringify({ reason, source_line: 1 })}\n`)
      .join(''),
  );
  await writeFile(convertMetricsPath, JSON.stringify({ num_tasks: 5, num_rollouts: 20, num_positive_trajectories: 7 }));
  return {
    candidatesPath,
    localProfilePath,
    skippedPath,
    convertMetricsPath,
    outDir: path.join(dir, 'out'),
    agentName: 'demo_pivot_agent',
    datasetName: 'demo',
    maxPivots: 2,
    jsonlFpath: 'data/demo_pivots.jsonl',
    simulatorLabel: 'seeded policy simulator',
  };
}
