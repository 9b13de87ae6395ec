import assert from 'node:assert/strict';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pivotKey } from '../../gym/pivotIdentity';
import {
  createNightlySchedule,
  deleteSchedule,
  describeSchedule,
  scheduleRunIds,
  triggerSchedule,
} from '../../client/schedules';
import { pivotGymConfigFileName } from '../../gym/gymConfig';
import { validatePivotDataset } from '../../gym/validator';
import type { NightlyMiningResult } from '../../contracts/poolPayloads';
import { readJsonlSync } from '../helpers/jsonl';
import { addSource, setupPoolTest, type PoolTestContext } from './poolSetup';

// Nightly incremental mining through a real Temporal Schedule on the dev server.

let ctx: PoolTestContext;

before(async () => {
  ctx = await setupPoolTest('nightly-test', {
    'night1.jsonl': (t) => t < 10,
    'night2.jsonl': (t) => t >= 10,
  });
});

after(async () => {
  await ctx?.close();
});

/** Triggers the schedule and waits for the run it starts (the n-th run of the schedule). */
async function triggerAndWait(scheduleId: string, n: number): Promise<NightlyMiningResult> {
  await triggerSchedule(ctx.env.client, scheduleId);
  let ids: string[];
  while ((ids = await scheduleRunIds(ctx.env.client, scheduleId)).length < n) await sleep(200);
  return (await ctx.env.client.workflow.getHandle(ids[n - 1]!).result()) as NightlyMiningResult;
}

const agentName = 'nightly_pivots_pivot_agent';

test(
  'a scheduled nightly run mines only new sources and the pool holds the union without duplicates',
  { timeout: 600_000 },
  async () => {
    const scheduleId = 'nightly-demo';
    await createNightlySchedule(ctx.env.client, {
      schedule_id: scheduleId,
      input: { config_path: ctx.configPath },
      // New Year's midnight: the test drives runs with trigger, the cron never fires while it runs.
      cron: '0 0 1 1 *',
      time_zone: 'Europe/Berlin',
      jitter: '1m',
      task_queue: ctx.taskQueue,
    });
    const described = await describeSchedule(ctx.env.client, scheduleId);
    assert.equal(described.policies.overlap, 'SKIP');
    assert.equal(described.spec.timezone, 'Europe/Berlin');
    assert.equal(described.action.type === 'startWorkflow' && described.action.workflowType, 'nightlyMiningWorkflow');

    const source1 = addSource(ctx, 'night1.jsonl');
    const first = await triggerAndWait(scheduleId, 1);
    assert.equal(first.status, 'published', first.message);
    assert.deepEqual(first.sources, [source1]);
    assert.ok(first.counts.added! > 0, JSON.stringify(first.counts));
    const firstRows = readJsonlSync(first.pivotsPath!);
    const firstFile = readFileSync(first.pivotsPath!, 'utf8');

    // Night 2: one new file, plus the night-1 file again under another name (its pivots are duplicates).
    const source2 = addSource(ctx, 'night2.jsonl');
    const copy = addSource(ctx, 'night1.jsonl', 'late/night1_copy.jsonl');
    const second = await triggerAndWait(scheduleId, 2);
    assert.equal(second.status, 'published', second.message);
    assert.deepEqual(
      [...second.sources].sort(),
      [copy, source2].sort(),
      'the already-mined night-1 file is not mined again',
    );
    assert.ok(second.counts.duplicates_of_pool! > 0, JSON.stringify(second.counts));
    assert.equal(second.counts.previous_pivots, firstRows.length);

    const rows = readJsonlSync(second.pivotsPath!);
    const keys = rows.map(pivotKey);
    assert.equal(new Set(keys).size, keys.length, 'no pivot twice in the pool');
    assert.equal(rows.length, firstRows.length + second.counts.added!);
    assert.deepEqual(rows.slice(0, firstRows.length), firstRows, 'the pool keeps every earlier pivot');
    assert.ok(second.counts.added! > 0);
    const night2Sources = new Set(rows.slice(firstRows.length).map((r: any) => r.provenance.source_file));
    assert.ok(
      night2Sources.size > 0 && ![...night2Sources].some((s) => String(s).includes('night1')),
      [...night2Sources].join(','),
    );
    assert.equal(readFileSync(first.pivotsPath!, 'utf8'), firstFile, 'published versions are immutable');

    // latest points at the new version; the manifest records which version consumed each source.
    assert.equal(path.basename(readlinkSync(path.join(second.poolDir, 'latest'))), second.versionId);
    const manifest = JSON.parse(readFileSync(path.join(second.poolDir, 'manifest.json'), 'utf8'));
    assert.deepEqual(Object.fromEntries(manifest.sources.map((s: any) => [s.path, s.version])), {
      [source1]: first.versionId,
      [source2]: second.versionId,
      [copy]: second.versionId,
    });
    const gymConfig = path.join(path.dirname(second.pivotsPath!), pivotGymConfigFileName('nightly_pivots'));
    const validation = await validatePivotDataset({
      path: second.pivotsPath!,
      agentRef: agentName,
      gymConfigPath: gymConfig,
      checkToolNames: true,
    });
    assert.equal(validation.exitCode, 0, validation.stderr);

    // Nothing new: the run ends after the scan and says so, latest unchanged.
    const third = await triggerAndWait(scheduleId, 3);
    assert.equal(third.status, 'up_to_date');
    assert.match(third.message, /nothing new/);
    assert.equal(third.versionId, second.versionId);

    await deleteSchedule(ctx.env.client, scheduleId);
  },
);
