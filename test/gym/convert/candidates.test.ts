import assert from 'node:assert/strict';
import { test } from 'node:test';
import { convertToCandidates } from '../../../gym/convert';
import { call, output, readJsonl, rollout, say, tempDir, writeJsonl } from './helpers';

// A collect rollout of a row whose data stamped `_ng_environment_server` (0.7.0's agent routing)
// keeps the stamp, and 0.7.0 groups its aggregate metrics by it. Local profiling materializes the
// candidates convert writes, and groups by agent only (docs/nemo-gym.md), which holds only as long
// as a candidate is built from its pivot and provenance alone, never from its source row's fields.

const STAMP = '_ng_environment_server';

test("candidates never carry a collect rollout's _ng_environment_server stamp", async () => {
  const dir = tempDir();
  const steps = [call('lookup', 'c1'), output('c1'), call('lookup', 'c2'), output('c2'), say('done')];
  const stamped = (task: number, server: string) =>
    rollout(steps, { agent_ref: { name: 'desk_agent' }, _ng_task_index: task, _ng_rollout_index: 0, [STAMP]: server });
  const inputs = [writeJsonl(`${dir}/rollouts.jsonl`, [stamped(0, 'front_relay'), stamped(1, 'back_relay')])];
  const summary = await convertToCandidates({ inputs, outDir: `${dir}/out`, agent_name: 'pivot_agent' });
  const candidates = readJsonl(summary.candidatesPath);
  assert.ok(candidates.length >= 2, `a candidate from each stamped rollout (${candidates.length})`);
  for (const candidate of candidates) {
    assert.deepEqual(Object.keys(candidate), ['responses_create_params', 'expected_action', 'agent_ref', 'provenance']);
    assert.ok(!JSON.stringify(candidate).includes(STAMP), JSON.stringify(candidate));
  }
});
