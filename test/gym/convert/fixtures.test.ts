import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { convertToCandidates, pivotCandidateSchema, skipAuditRowSchema } from '../../../gym/convert';
import { canonicalJson } from '../../../gym/pivotIdentity';
import { validatePivotDataset } from '../../../gym/validator';
import { fixturesDir } from '../../helpers/fixtures';
import { fixtureEnvironments, projectAll, projectChat, readJsonl, tempDir } from './helpers';

const gymDir = path.join(fixturesDir, 'gym');
const ENVIRONMENTS = fixtureEnvironments(gymDir);

test('every NeMo Gym fixture environment is covered', () => {
  assert.ok(ENVIRONMENTS.length >= 8, `found ${ENVIRONMENTS.join(', ')}`);
  for (const env of ENVIRONMENTS)
    assert.ok(existsSync(path.join(gymDir, 'chat', `${env}.jsonl`)), `chat form of ${env}`);
});

interface SummaryRollout {
  line: number;
  reward: number;
  decision_points: number;
  input: { decision_points: number };
  decision_point_detail: { kind: string; function_calls: number; tool_names: string[] }[];
}

async function convert(file: string) {
  const outDir = tempDir();
  const summary = await convertToCandidates({
    inputs: [file],
    outDir,
    agent_name: 'pivot_agent',
    min_source_reward: 1.0,
  });
  return { summary, candidates: readJsonl(summary.candidatesPath), skipped: readJsonl(summary.skippedPath) };
}

/** The whole source trajectory as Responses items, reasoning and null fields removed. */
function sourceItems(row: Record<string, any>): Record<string, unknown>[] {
  const input = row.responses_create_params.input;
  const prefix = typeof input === 'string' ? [{ content: input, role: 'user', type: 'message' }] : input;
  const out = row.response.output;
  const output = out.length > 0 && out.every(Array.isArray) ? out[out.length - 1] : out;
  return [...prefix, ...output]
    .filter((item: any) => item.type !== 'reasoning')
    .map((item: any) => {
      const copy = Object.fromEntries(Object.entries(item).filter(([, v]) => v !== null)) as Record<string, any>;
      if (Array.isArray(copy.content))
        copy.content = copy.content.map((p: any) =>
          Object.fromEntries(Object.entries(p).filter(([, v]) => v !== null)),
        );
      return copy;
    });
}

function comparable(candidate: Record<string, any>): string {
  return canonicalJson({
    input: projectAll(candidate.responses_create_params.input),
    tools: candidate.responses_create_params.tools,
    action: candidate.expected_action,
  });
}

for (const env of ENVIRONMENTS) {
  test(`${env}: rollouts and their chat form give the summary's decision points and the same candidates`, async () => {
    const summary = JSON.parse(readFileSync(path.join(gymDir, env, 'summary.json'), 'utf8')) as {
      rollouts: SummaryRollout[];
    };
    const rolloutsFile = path.join(gymDir, env, 'example_rollouts.jsonl');
    const chatFile = path.join(gymDir, 'chat', `${env}.jsonl`);
    const rows = readJsonl(rolloutsFile);
    const chatRows = readJsonl(chatFile);
    const gym = await convert(rolloutsFile);
    const chat = await convert(chatFile);
    const positive = summary.rollouts.filter((r) => r.reward === 1.0);

    assert.equal(gym.summary.counts.trajectories, summary.rollouts.length);
    assert.equal(gym.summary.counts.positive_trajectories, positive.length);
    assert.equal(chat.summary.counts.positive_trajectories, positive.length);
    for (const result of [gym, chat]) {
      const c = result.summary.counts;
      assert.equal(c.candidates + c.skipped + c.deduped, c.decision_points);
      assert.equal(c.deduped, 0, 'no two fixture pivots are identical');
      assert.equal(result.candidates.length, c.candidates);
      assert.equal(result.skipped.length, c.skipped);
    }

    for (const rollout of positive) {
      const atLine = (r: Record<string, any>) => r.provenance.source_line === rollout.line;
      const gymRows = [...gym.candidates.filter(atLine), ...gym.skipped.filter(atLine)];
      const chatCount = chat.candidates.filter(atLine).length + chat.skipped.filter(atLine).length;
      assert.equal(gymRows.length, rollout.decision_points, `gym line ${rollout.line}`);
      // A message list has no task/rollout boundary: every assistant turn, input ones too, is a decision point.
      assert.equal(chatCount, rollout.decision_points + rollout.input.decision_points, `chat line ${rollout.line}`);

      for (const row of gymRows) {
        const detail = rollout.decision_point_detail[row.provenance.pivot_index];
        if (detail.function_calls > 1) {
          assert.equal(row.reason, 'parallel_tool_calls');
        } else if (detail.function_calls === 1) {
          assert.deepEqual(row.expected_action.type, 'function_call');
          assert.equal(row.expected_action.name, detail.tool_names[0]);
        } else {
          assert.equal(row.expected_action.type, 'message');
        }
      }
    }

    const items = new Map(rows.map((row, i) => [i + 1, sourceItems(row)]));
    for (const candidate of gym.candidates) {
      const source = items.get(candidate.provenance.source_line)!;
      const input = candidate.responses_create_params.input;
      assert.deepEqual(input, source.slice(0, input.length), 'input is exactly the source items before the pivot');
      const next = source[input.length] as Record<string, unknown>;
      assert.ok(next.type === 'function_call' || next.role === 'assistant', 'the pivot turn follows the input');
    }
    for (const candidate of chat.candidates) {
      const messages = projectChat(chatRows[candidate.provenance.source_line - 1].messages);
      const input = projectAll(candidate.responses_create_params.input);
      assert.deepEqual(input, messages.slice(0, input.length));
    }

    const chatKeys = new Set(chat.candidates.map(comparable));
    for (const candidate of gym.candidates)
      assert.ok(chatKeys.has(comparable(candidate)), `chat form lacks gym pivot ${candidate.provenance.uuid}`);
    const extraChat = chat.candidates.length - gym.candidates.length;
    assert.equal(
      extraChat,
      positive.reduce((n, r) => n + r.input.decision_points, 0),
      'chat adds exactly the input turns',
    );

    for (const result of [gym, chat]) {
      for (const candidate of result.candidates) {
        pivotCandidateSchema.parse(candidate);
        const params = candidate.responses_create_params;
        assert.ok(
          Object.values(params).every((v) => v !== null),
          'no null-valued request field',
        );
        assert.equal(params.tool_choice, 'auto');
        assert.equal(params.parallel_tool_calls, false);
        assert.deepEqual(candidate.agent_ref, { type: 'responses_api_agents', name: 'pivot_agent' });
        assert.match(
          candidate.provenance.uuid,
          /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        );
      }
      for (const skip of result.skipped) skipAuditRowSchema.parse(skip);
      const validation = await validatePivotDataset({ path: result.summary.candidatesPath, agentRef: 'pivot_agent' });
      assert.equal(validation.exitCode, 0, validation.stderr);
    }
  });
}

test('aviary: the last cumulative transition is read and the tools come from response.tools', async () => {
  const { candidates } = await convert(path.join(gymDir, 'aviary', 'example_rollouts.jsonl'));
  assert.ok(candidates.length > 0);
  for (const candidate of candidates) {
    assert.deepEqual(
      candidate.responses_create_params.tools.map((t: any) => t.name),
      ['calculator', 'submit_answer'],
    );
    assert.equal(candidate.responses_create_params.input[0].role, 'user');
    assert.equal(candidate.provenance.task_index, 1, 'task_idx of line 3');
  }
});

test('rerunning a conversion writes byte-identical files', async () => {
  const file = path.join(gymDir, 'workplace_assistant', 'example_rollouts.jsonl');
  const first = await convert(file);
  const second = await convert(file);
  for (const key of ['candidatesPath', 'skippedPath'] as const) {
    assert.equal(readFileSync(first.summary[key], 'utf8'), readFileSync(second.summary[key], 'utf8'));
  }
  const uuids = first.candidates.map((c) => c.provenance.uuid);
  assert.equal(new Set(uuids).size, uuids.length);
});
