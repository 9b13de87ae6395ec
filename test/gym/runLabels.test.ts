import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { labelRuns } from '../../gym/runLabels';
import { ensureNemoGym } from '../../scripts/lib/nemoGym';

// The names NeMo Gym 0.7.0 gives aggregate-metrics entries and profile groups, against its own
// `label_runs` (global_config.py) on the same run keys and agents.

const CASES: Array<Array<[string, string | null]>> = [
  // One server an agent: each labelled by its agent.
  [
    ['alpha_env', 'alpha_agent'],
    ['beta_env', 'beta_agent'],
  ],
  // Two servers front one agent: each by its own name; an unstamped agent keyed by itself.
  [
    ['front_desk_relay', 'demo_agent'],
    ['travel_desk_relay', 'demo_agent'],
    ['concierge_agent', 'concierge_agent'],
  ],
  // A run keyed by another run's agent name, with no agent of its own: the clash falls back to the keys.
  [
    ['relay_env', 'solo_agent'],
    ['solo_agent', null],
    ['beta_env', 'beta_agent'],
  ],
];

const PYTHON = `
import json, sys
from nemo_gym.global_config import label_runs
print(json.dumps([label_runs(dict(case)) for case in json.load(sys.stdin)]))
`;

test("run labels are 0.7.0's label_runs", { timeout: 900_000 }, () => {
  const python = path.join(ensureNemoGym('0.7.0').binDir, 'python');
  const theirs = JSON.parse(
    execFileSync(python, ['-c', PYTHON], { input: JSON.stringify(CASES), encoding: 'utf8' }),
  ) as Record<string, string>[];
  const ours = CASES.map((c) => Object.fromEntries(labelRuns(new Map(c.map(([k, a]) => [k, a ?? undefined])))));
  assert.deepEqual(ours, theirs);
  assert.deepEqual(theirs[2], { relay_env: 'relay_env', solo_agent: 'solo_agent', beta_env: 'beta_agent' }, 'a clash');
});
