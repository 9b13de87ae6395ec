import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { assertSameCollection, assertSameProfile } from '../helpers/collect070';
import { ENVIRONMENT_SERVER, type AnswerScript, type CollectServers } from '../helpers/collect070Servers';
import { collectCases } from '../helpers/collectCases';

// What NeMo Gym 0.7.0's ng_collect_rollouts and our collect stage POST to the agent's
// /aggregate_metrics for the same rollouts, byte for byte: 0.7.0's `_fetch_agent_metrics` keeps of
// each rollout's `response` its `usage` and `incomplete_details` when either is not None (0.4.0 kept
// a truthy usage alone), so an agent can aggregate token counts and truncations.

const SEED = 23;
const STAMPS = `,"_ng_environment_server":"${ENVIRONMENT_SERVER}","_ng_result_type":"legacy_agent"`;
const { opened, task, caseRows } = collectCases(SEED, [], 'pivot-miner-aggregate-request-070-');
let servers: CollectServers;

before(async () => void ({ servers } = await opened()));

/** Rewrites every `usage` object in an answer, one level of nesting deep (its token details). */
const USAGE = /"usage":\{(?:[^{}]|\{[^{}]*\})*\}/g;

/**
 * Task 1's answers report a truncated response; task 2's first repeat an empty usage, which 0.7.0
 * keeps (it is not None) where 0.4.0 left it out (it is falsy).
 */
const truncatedAndEmptyUsage: AnswerScript = (request, answer) => {
  if (request._ng_task_index === 1) {
    const truncated = answer.replaceAll(
      '"incomplete_details":null',
      '"incomplete_details":{"reason":"max_output_tokens"}',
    );
    assert.notEqual(truncated, answer, 'the answer has an incomplete_details to set');
    return truncated;
  }
  if (request._ng_task_index === 2 && request._ng_rollout_index === 0) {
    const emptied = answer.replace(USAGE, '"usage":{}');
    assert.notEqual(emptied, answer, 'the answer has a usage to empty');
    return emptied;
  }
  return answer;
};

test(
  '/aggregate_metrics gets the same bytes from both: usage and incomplete_details kept, last',
  { timeout: 300_000 },
  async () => {
    servers.script = truncatedAndEmptyUsage;
    try {
      const { caseDir, rowsFile } = caseRows('usage_and_truncation', [task(0), task(1), task(2)]);
      const first = servers.aggregateRequests.length;
      const ours = await assertSameCollection(servers, caseDir, { rowsFile, numRepeats: 2, options: {} });
      const [theirs, mine, ...more] = servers.aggregateRequests.slice(first);
      assert.equal(more.length, 0, 'one /aggregate_metrics call each');
      const entries = (JSON.parse(theirs!) as { verify_responses: Record<string, unknown>[] }).verify_responses;
      assert.equal(entries.length, 6);
      const responses = entries.map((e) => e.response as Record<string, unknown>);
      assert.deepEqual(
        responses.map((r) => Object.keys(r)),
        [['usage'], ['usage'], ['usage', 'incomplete_details'], ['usage', 'incomplete_details'], ['usage'], ['usage']],
      );
      assert.deepEqual(responses[2]!.incomplete_details, { reason: 'max_output_tokens' });
      assert.deepEqual(responses[4]!.usage, {}, 'an empty usage is kept');
      assert.ok(
        entries.every((e) => Object.keys(e).at(-1) === 'response'),
        'response is last',
      );
      // 0.7.0's rollouts carry its environment server and result type stamps, which ours have not
      // (test/helpers/collect070Lines.ts); its entries keep them, so they are cut, six of them.
      const cut = theirs!.replaceAll(STAMPS, '');
      assert.equal(theirs!.length - cut.length, 6 * STAMPS.length);
      assert.equal(mine, cut, 'the request bodies');
      // Profiling reads the same digests, whose responses now hold more: its files are still 0.7.0's.
      await assertSameProfile(ours.prefix);
    } finally {
      servers.script = (_request, answer) => answer;
    }
  },
);
