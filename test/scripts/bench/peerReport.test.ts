import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundleModuleMap, moduleOf, summarizeProfile } from '../../../scripts/bench/peerProfile';
import type { CpuProfile } from '../../../scripts/diagnostics/v8CpuProfile';
import {
  compareRewards,
  median,
  pairsOf,
  peerJsonLine,
  rewardsByKey,
  summarize,
  type PeerRound,
} from '../../../scripts/bench/peerReport';

// The peer bench's arithmetic on made-up rounds: no processes, no clocks (the bench itself is never
// a timed test).

const a = (index: number, seconds: number, collector: number, servers = 10): PeerRound => ({
  side: 'A',
  index,
  rollouts: 1000,
  stageSeconds: seconds,
  collectorCpu: { ng_collect_rollouts: collector },
  serversCpu: { agent: servers },
  load: '1.00 1.00 1.00',
});
const b = (index: number, seconds: number, worker: number, temporal: number, servers = 10): PeerRound => ({
  side: 'B',
  index,
  rollouts: 1000,
  stageSeconds: seconds,
  collectorCpu: { worker, temporal },
  serversCpu: { agent: servers },
  load: '1.00 1.00 1.00',
});

test('median: the middle value, or the mean of the two middle ones', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

test('A B B A makes two pairs of rounds that ran back to back; warm-ups are left out', () => {
  const rounds = [a(0, 9, 1), b(0, 9, 1, 1), a(1, 10, 1), b(2, 8, 1, 1), b(3, 8, 1, 1), a(4, 10, 1)];
  const pairs = pairsOf(rounds);
  assert.deepEqual(
    pairs.map((p) => [p.a.index, p.b.index]),
    [
      [1, 2],
      [4, 3],
    ],
  );
  assert.throws(() => pairsOf([a(1, 1, 1), a(2, 1, 1)]), /both side A/);
  assert.throws(() => pairsOf([a(1, 1, 1)]), /do not make pairs/);
});

test("ratios are ours over NeMo Gym's, the median of the pairs' own ratios", () => {
  // Pair 1: A 100/s, B 125/s (1.25); pair 2: A 50/s, B 50/s (1.0); pair 3: A 100/s, B 50/s (0.5).
  const rounds = [a(1, 10, 1), b(2, 8, 2, 0.5), b(3, 20, 1, 1), a(4, 20, 2), a(5, 10, 1), b(6, 20, 0.5, 0.5, 12)];
  const s = summarize(rounds);
  assert.equal(s.pairs, 3);
  assert.equal(s.throughputRatio, 1);
  // Worker CPU per rollout over ng_collect_rollouts': 2/1, 1/2, 0.5/1 → median 0.5.
  assert.equal(s.workerCpuRatio, 0.5);
  // Worker + Temporal: 2.5/1, 2/2, 1/1 → median 1.
  assert.equal(s.collectorCpuRatio, 1);
  assert.equal(s.serversCpuRatio, 1);
  assert.equal(s.a.collectorCpuMs, 1);
  assert.equal(s.b.workerCpuMs, 1);
  assert.equal(s.b.temporalCpuMs, 0.5);
});

test("the closing line is one JSON object with the issue's keys first", () => {
  const s = summarize([a(1, 10, 1), b(2, 10, 2, 1)]);
  const line = peerJsonLine(s, true, { pairs: 1 });
  assert.doesNotMatch(line, /\n/);
  assert.deepEqual(JSON.parse(line), {
    bench: 'peer',
    throughput_ratio: 1,
    worker_cpu_ratio: 2,
    collector_cpu_ratio: 3,
    rewards_equal: true,
    pairs: 1,
  });
  assert.deepEqual(Object.keys(JSON.parse(line)).slice(0, 5), [
    'bench',
    'throughput_ratio',
    'worker_cpu_ratio',
    'collector_cpu_ratio',
    'rewards_equal',
  ]);
});

test('rewards are compared per (task, rollout) key, whatever the line order', () => {
  const row = (t: number, r: number, reward: number, extra = {}) =>
    JSON.stringify({ _ng_task_index: t, _ng_rollout_index: r, reward, ...extra });
  const ours = rewardsByKey([row(0, 0, 1), row(0, 1, 0), row(1, 0, 1), '']);
  const theirs = rewardsByKey([row(1, 0, 1, { category: 'x' }), row(0, 1, 0), row(0, 0, 1)]);
  assert.deepEqual(compareRewards(ours, theirs), { equal: true, keys: 3, missing: [], extra: [], differing: [] });
  const off = compareRewards(ours, rewardsByKey([row(0, 0, 0), row(1, 0, 1), row(2, 0, 1)]));
  assert.equal(off.equal, false);
  assert.deepEqual(off.missing, ['0:1']);
  assert.deepEqual(off.extra, ['2:0']);
  assert.deepEqual(off.differing, ['0:0 (1 vs 0)']);
  assert.throws(() => rewardsByKey([row(0, 0, 1), row(0, 0, 1)]), /appears twice/);
  assert.throws(() => rewardsByKey([JSON.stringify({ _ng_task_index: 0, _ng_rollout_index: 0 })]), /no numeric reward/);
});

test('a bundle line maps to the source module whose marker precedes it', () => {
  const lookup = bundleModuleMap(
    [
      '"use strict";',
      '// activities/chunk/chunk.ts',
      'a',
      '// gym/jsonl.ts',
      'b',
      '// activities/chunk/chunk.ts',
      'c',
    ].join('\n'),
  );
  assert.equal(lookup(0), undefined);
  assert.equal(lookup(2), 'activities/chunk/chunk.ts');
  assert.equal(lookup(4), 'gym/jsonl.ts');
  assert.equal(lookup(6), 'activities/chunk/chunk.ts');
  const bundles = new Map([['file:///x/dist/cli.js', lookup]]);
  assert.equal(moduleOf({ functionName: 'f', url: 'file:///x/dist/cli.js', lineNumber: 4 }, bundles), 'gym/jsonl.ts');
  assert.equal(
    moduleOf({ functionName: 'g', url: 'file:///x/node_modules/@temporalio/worker/lib/a.js', lineNumber: 1 }, bundles),
    'npm:@temporalio/worker',
  );
  assert.equal(
    moduleOf({ functionName: '(garbage collector)', url: '', lineNumber: -1 }, bundles),
    '(garbage collector)',
  );
  assert.equal(moduleOf({ functionName: 'parse', url: '', lineNumber: -1 }, bundles), '(native) parse');
});

test('self and inclusive time of a profile, idle samples apart', () => {
  // root → runChunk (chunk.ts) → parse (native); root → (idle).
  const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 4] },
      { id: 2, callFrame: frame('runChunk', 'file:///x/dist/cli.js', 2), children: [3] },
      { id: 3, callFrame: frame('parse') },
      { id: 4, callFrame: frame('(idle)') },
    ],
    samples: [2, 3, 3, 4],
    timeDeltas: [1000, 1000, 1000, 5000],
  };
  const bundles = new Map([['file:///x/dist/cli.js', bundleModuleMap('x\n// activities/chunk/chunk.ts\ny\n')]]);
  const t = summarizeProfile('1-t0', profile, bundles);
  assert.equal(t.busyMs, 3);
  assert.equal(t.idleMs, 5);
  assert.deepEqual(t.selfByModule, [
    ['(native) parse', 2],
    ['activities/chunk/chunk.ts', 1],
  ]);
  assert.deepEqual(new Map(t.inclusiveByModule).get('activities/chunk/chunk.ts'), 3);
  assert.deepEqual(t.inclusiveByFunction, [['runChunk (activities/chunk/chunk.ts)', 3]]);
});
