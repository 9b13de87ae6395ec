import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runHealthChecks } from '../../../gym/healthChecks';
import { healthLine, readRunHealth, stageHealthOf, type StageHealth } from '../../../gym/health/stageHealth';
import { healthBody } from '../../../gym/report/health';
import { buildRunSummary } from '../../../gym/runSummary';
import { printHealth } from '../../../scripts/commands/status';

// The brief of a stage's health that run_summary.json, report.html and `pivot-miner status` show,
// from the fixture that trips every check (test/gym/healthChecks/rollouts.jsonl).

const FIXTURE = path.join(__dirname, '..', 'healthChecks', 'rollouts.jsonl');

async function fixtureHealth(ignored: Parameters<typeof runHealthChecks>[1] = []): Promise<StageHealth> {
  return stageHealthOf(await runHealthChecks([FIXTURE], ignored), 'rollouts_quality_summary.json');
}

test('each check has a verdict: fail with its count, pass, unobserved where nothing held its evidence, or ignored', async () => {
  const h = await fixtureHealth(['check_execution_error']);
  assert.deepEqual(h.verdicts, { healthy: 1, unhealthy: 12, unobserved: 3 });
  assert.deepEqual(h.checks.model_call_failed, { verdict: 'fail', issues: 3 });
  assert.deepEqual(h.checks.check_execution_error, { verdict: 'ignored', issues: 0 });
  assert.equal(h.failed_checks.length, 13);
  assert.equal(h.examples.model_call_failed!.length, 3);
  assert.deepEqual(h.examples.model_call_failed![0], {
    rollout_id: '0-1',
    locator: { call_id: 'a2' },
    detail: { status: 500, error_category: 'server_error', terminal: true },
  });

  const healthy = stageHealthOf(await runHealthChecks([], []), 'q.json');
  assert.equal(healthy.checks.record_unreadable.verdict, 'unobserved');
});

test('run_summary.json, report.html and status carry the verdicts of each stage', async () => {
  const h = await fixtureHealth();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-stage-health-'));
  try {
    writeFileSync(path.join(dir, 'rollouts_health.json'), JSON.stringify(h));
    const health = await readRunHealth(dir);
    assert.deepEqual(Object.keys(health), ['collect']);

    const pivots = { candidates: 0, published: 0, published_partial: 0, held_back_incomplete: 0 };
    const dropped = { all_pass: 0, all_fail: 0, constant: 0, over_ceiling: 0, over_budget: 0, over_share: 0 };
    const summary = buildRunSummary({
      ...{ runId: 'r', pipelineVersion: 'v', numSamples: 2, allowPartial: false, accounting: {} },
      ...{ pivots: { ...pivots, ...dropped }, publishedBySplit: {}, counts: {}, health },
    });
    assert.deepEqual(summary.health.collect!.checks.task_consistently_unhealthy, { verdict: 'fail', issues: 3 });

    const html = healthBody(health);
    assert.match(html, /<td>model_call_runaway_generation<\/td><td class="fail">fail \(2\)<\/td>/);
    assert.match(html, /collect: 16 rollouts checked: 1 healthy, 12 unhealthy, 3 unobserved/);

    const printed: string[] = [];
    const log = console.log;
    console.log = (line: string) => printed.push(line);
    try {
      await printHealth(dir);
    } finally {
      console.log = log;
    }
    assert.deepEqual(printed, [`health ${healthLine('collect', h)}`]);
    assert.match(
      printed[0]!,
      /^health collect: 16 checked, 1 healthy, 12 unhealthy, 3 unobserved; failed: .*model_call_failed 3/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
