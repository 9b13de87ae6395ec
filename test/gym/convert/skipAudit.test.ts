import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { DUPLICATE_REASON, convertToCandidates, skipAuditRowSchema } from '../../../gym/convert';
import { pivotKey } from '../../../gym/pivotIdentity';
import { readSkipReasons } from '../../../gym/publishInputs';
import { fixturesDir } from '../../helpers/fixtures';
import { call, fixtureEnvironments, output, readJsonl, rollout, say, tempDir, writeJsonl } from './helpers';

// The skip audit and the candidates together account for every decision point of the converted
// positive trajectories: a decision point is either a candidate or one audit line saying why not.

const gymDir = path.join(fixturesDir, 'gym');

interface Summary {
  rollouts: { reward: number; decision_points: number; input: { decision_points: number } }[];
}

/** Decision points of the positive rollouts, from summary.json (counted without the converter). */
function positiveDecisionPoints(env: string): { gym: number; chat: number } {
  const summary = JSON.parse(readFileSync(path.join(gymDir, env, 'summary.json'), 'utf8')) as Summary;
  const positive = summary.rollouts.filter((r) => r.reward === 1.0);
  const gym = positive.reduce((n, r) => n + r.decision_points, 0);
  // A message list has no task/rollout boundary, so the chat form adds the input's assistant turns.
  return { gym, chat: gym + positive.reduce((n, r) => n + r.input.decision_points, 0) };
}

async function convert(inputs: string[]) {
  const summary = await convertToCandidates({ inputs, outDir: tempDir(), agent_name: 'pivot_agent' });
  return { summary, candidates: readJsonl(summary.candidatesPath), audit: readJsonl(summary.skippedPath) };
}

type Converted = Awaited<ReturnType<typeof convert>>;

const decisionPoint = (p: Record<string, any>) => `${p.source_file}:${p.source_line}:${p.pivot_index}`;

/** Each decision point appears exactly once, in the candidates or in the audit, and the counts agree. */
function assertAccounted(result: Converted, expected: number, label: string): void {
  const { candidates, audit, summary } = result;
  assert.equal(candidates.length + audit.length, expected, `${label}: candidates + audit lines`);
  const points = [...candidates, ...audit].map((r) => decisionPoint(r.provenance));
  assert.equal(new Set(points).size, points.length, `${label}: no decision point is reported twice`);
  const duplicates = audit.filter((a) => a.reason === DUPLICATE_REASON);
  assert.equal(duplicates.length, summary.counts.deduped, `${label}: one audit line per deduped decision point`);
  assert.equal(audit.length - duplicates.length, summary.counts.skipped, `${label}: the other lines are the skips`);
  const uuids = new Set(candidates.map((c) => c.provenance.uuid));
  for (const line of audit) skipAuditRowSchema.parse(line);
  for (const line of duplicates) {
    assert.ok(uuids.has(line.duplicate_of), `${label}: ${decisionPoint(line.provenance)} names a kept candidate`);
    assert.ok(line.detail.includes(line.duplicate_of), 'the detail names the kept pivot too');
  }
}

for (const env of fixtureEnvironments(gymDir)) {
  test(`${env}: candidates + audit lines are the decision points of positive trajectories, duplicates included`, async () => {
    const expected = positiveDecisionPoints(env);
    const rollouts = path.join(gymDir, env, 'example_rollouts.jsonl');
    const chat = path.join(gymDir, 'chat', `${env}.jsonl`);
    // The same rollouts exported again by a second run: every pivot of the copy is a duplicate.
    const copyDir = path.join(tempDir(), 'second_run');
    mkdirSync(copyDir);
    const copy = path.join(copyDir, 'example_rollouts.jsonl');
    copyFileSync(rollouts, copy);

    const alone = { gym: await convert([rollouts]), copy: await convert([copy]), chat: await convert([chat]) };
    assertAccounted(alone.gym, expected.gym, `${env} rollouts`);
    assertAccounted(alone.chat, expected.chat, `${env} chat`);

    // Together the forms overlap: pivots whose prefix looks the same in both (a first user turn)
    // are duplicates across forms, and every pivot of the copy duplicates the original.
    const merged = await convert([rollouts, copy, chat]);
    assertAccounted(merged, 2 * expected.gym + expected.chat, `${env} rollouts twice + chat`);
    const duplicates = merged.audit.filter((a) => a.reason === DUPLICATE_REASON);
    const fromCopy = duplicates.filter((d) => d.provenance.source_file === copy);
    assert.equal(fromCopy.length, alone.gym.candidates.length, 'each pivot of the copy is audited as a duplicate');
    const byUuid = new Map(merged.candidates.map((c) => [c.provenance.uuid, c]));
    const convertedAlone = new Map(
      [alone.gym, alone.copy, alone.chat].flatMap((r) => r.candidates.map((c) => [decisionPoint(c.provenance), c])),
    );
    for (const line of duplicates) {
      const kept = byUuid.get(line.duplicate_of)!;
      const dropped = convertedAlone.get(decisionPoint(line.provenance));
      assert.ok(dropped, `${decisionPoint(line.provenance)} is a pivot when its file is converted alone`);
      assert.equal(pivotKey(dropped), pivotKey(kept), 'the named pivot has the same identity');
      assert.deepEqual(
        Object.keys(line.provenance).sort(),
        Object.keys(kept.provenance)
          .filter((k) => k !== 'uuid')
          .sort(),
        'same provenance fields as the other lines',
      );
    }
    for (const line of fromCopy) {
      const kept = byUuid.get(line.duplicate_of)!;
      assert.equal(kept.provenance.source_file, rollouts, 'the first occurrence is the one kept');
      assert.deepEqual(
        [kept.provenance.source_line, kept.provenance.pivot_index],
        [line.provenance.source_line, line.provenance.pivot_index],
      );
    }
    // Publish reports duplicates as their own stage, so its skip reasons leave them out.
    const reasons = await readSkipReasons(merged.summary.skippedPath);
    assert.equal(
      [...reasons.values()].reduce((a, b) => a + b, 0),
      merged.summary.counts.skipped,
    );
    assert.equal(reasons.has(DUPLICATE_REASON), false);
  });
}

/** The same value with the keys of every object in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversedKeys(v)]),
  );
}

test('a pivot whose source serializes keys in another order is a duplicate of the kept one', async () => {
  const trajectory = [call('lookup', 'c1', '{"q":"a"}'), output('c1'), say('done')];
  const first = rollout(trajectory, { _ng_task_index: 0, _ng_rollout_index: 0 });
  const second = reversedKeys(rollout(trajectory, { _ng_task_index: 0, _ng_rollout_index: 1 }));
  const other = rollout([say('different')], { _ng_task_index: 1, _ng_rollout_index: 0 });
  const file = writeJsonl(path.join(tempDir(), 'rollouts.jsonl'), [first, second, other]);
  const result = await convert([file]);
  assertAccounted(result, 5, 'key order');
  assert.equal(result.summary.counts.deduped, 2, 'both decision points of the second rollout');
  const [kept] = result.candidates;
  const duplicates = result.audit.filter((a) => a.reason === DUPLICATE_REASON);
  assert.deepEqual(
    duplicates.map((d) => d.provenance.rollout_index),
    [1, 1],
  );
  assert.equal(duplicates[0]!.duplicate_of, kept!.provenance.uuid);
  // Converted alone, the second rollout's rows are written in another key order, yet the pool (which
  // compares written rows) sees the same pivots.
  const alone = await convert([writeJsonl(path.join(tempDir(), 'rollouts.jsonl'), [second])]);
  assert.notDeepEqual(
    alone.candidates.map((c) => JSON.stringify(c.responses_create_params)),
    result.candidates.slice(0, 2).map((c) => JSON.stringify(c.responses_create_params)),
  );
  assert.deepEqual(
    alone.candidates.map((c) => pivotKey(c)),
    result.candidates.slice(0, 2).map((c) => pivotKey(c)),
  );
});
