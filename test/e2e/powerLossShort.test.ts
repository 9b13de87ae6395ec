import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isMounted } from '../../scripts/forgetfulFs/mount';
import { runPowerLoss, SHORT_POWER_LOSS } from '../../scripts/chaos/powerLoss';
import { formatPowerLossReport, powerLossPassed } from '../../scripts/chaos/powerLossReport';

// The short power-loss variant: the artifacts root on forgetful-fs, power cut mid-chunk and right
// after a chunk completed (every worker SIGKILLed, unsynced data dropped, remounted, workers restarted),
// and once more after the run; what the disk kept must be the undisturbed run's artifacts, every key
// once. `npm run chaos -- --power-loss` is the long version, with a full disk.

test(
  'power loss (short): cuts mid-chunk and after a chunk leave the artifacts of an undisturbed run',
  { timeout: 900_000 },
  async () => {
    const report = await runPowerLoss(SHORT_POWER_LOSS, () => undefined);
    const table = formatPowerLossReport(report);
    console.log(table);
    assert.equal(report.missed.length, 0, `cut points not reached\n${table}`);
    assert.equal(report.cuts.length, SHORT_POWER_LOSS.points.length + 1, table);
    assert.equal(report.finished, true, table);
    assert.equal(report.identical, true, `artifacts differ: ${report.differing.join(', ')}\n${table}`);
    assert.equal(report.duplicate_keys, 0, table);
    assert.equal(report.missing_keys, 0, table);
    assert.ok(powerLossPassed(report, SHORT_POWER_LOSS.points.length), table);
    for (const name of ['undisturbed', 'powerloss']) assert.equal(isMounted(`${report.work_dir}/${name}`), false);
  },
);
