import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chaosPassed, formatReport } from '../../scripts/chaos/report';
import { runChaos } from '../../scripts/chaos/run';
import { SHORT } from '../../scripts/chaos/scenario';

// The short chaos variant: worker SIGKILLs in collect and local profiling, two Temporal dev server
// restarts on the same SQLite file, and injected HTTP faults; the run must publish exactly what an
// undisturbed run of the same seed publishes. `npm run chaos` is the long version.

test(
  'chaos (short): kills, server restarts and injected faults leave the artifacts of an undisturbed run',
  { timeout: 600_000 },
  async () => {
    const report = await runChaos(SHORT, () => undefined);
    const table = formatReport(report);
    console.log(table);
    assert.equal(report.identical, true, `artifacts differ: ${report.differing.join(', ')}\n${table}`);
    assert.equal(report.duplicate_keys, 0, table);
    assert.equal(report.missing_keys, 0, table);
    assert.ok(report.kills_by_stage.collect! >= 1 && report.kills_by_stage.local_profile! >= 1, table);
    assert.equal(report.server_restarts, SHORT.serverRestarts, table);
    // The sidecar records only faults we injected, and every injected fault kind that fails a request
    // shows up in it with the class the client gives it.
    assert.equal(report.unexplained_failure_lines, 0, table);
    assert.equal(report.exhausted_keys, 0, table);
    assert.ok(report.failure_lines > 0, table);
    assert.ok(chaosPassed(report), table);
  },
);
