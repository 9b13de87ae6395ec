import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { Cluster } from '../../scripts/fleet/cluster';
import { namespacesAvailable } from '../../scripts/fleet/hosts';
import { clusterOptions, SETTINGS } from '../../scripts/fleet/run';
import { writeFleetInputs, type RunSettings } from '../../scripts/fleet/runConfig';
import { runReference, runScenario, scenarioPassed } from '../../scripts/fleet/scenarios';

// The short fleet scenario (issue #41): hosts as network + mount namespaces, two worker hosts, one of
// them cut off from everything mid-chunk for longer than the chunk heartbeat timeout and healed
// while the run goes on, and one engine replica's host lost during local profiling. The run must
// publish what an undisturbed run of the same seed on the same fleet publishes, with every key once
// and nothing in the run directory touched after completion. `npm run fleet` runs the full matrix.
// Names are prefixed `pft-` (10.201.2.0/24), apart from a manual `npm run fleet` (`pfm-`).

const available = namespacesAvailable();
const skip = available.ok ? false : `${available.reason}; run as root with iproute2 to include the fleet scenario`;

test(
  'fleet (short): a worker partition healed mid-chunk and a lost engine replica leave the artifacts of an undisturbed run',
  { skip, timeout: 420_000 },
  async () => {
    const settings: RunSettings = { ...SETTINGS, numRepeats: 4, watchSeconds: 15, partitionSeconds: 20 };
    const opts = clusterOptions('pft', 2);
    const cluster = await Cluster.start(opts);
    try {
      const config = writeFleetInputs(cluster, settings);
      const reference = await runReference(cluster, settings, config, () => undefined);
      const r = await runScenario(
        cluster,
        'short',
        [
          { kind: 'partition_worker', stage: 'collect' },
          { kind: 'lose_engine', stage: 'local_profile' },
        ],
        reference,
        settings,
        config,
        () => undefined,
      );
      const table = JSON.stringify(r, null, 1);
      console.log(table);
      assert.deepEqual(r.hit, [true, true], `a fault missed its step\n${table}`);
      // The partition outlasted the chunk heartbeat timeout, so Temporal gave the cut-off host's chunks to the other.
      assert.ok((r.retried_activities['collect/runChunk'] ?? 0) >= 1, `no collect chunk was retried\n${table}`);
      assert.equal(r.identical, true, `artifacts differ: ${r.differing.join(', ')}\n${table}`);
      assert.equal(r.duplicate_keys, 0, table);
      assert.equal(r.missing_keys, 0, table);
      assert.equal(
        r.writes_after_completion,
        0,
        `changed after completion: ${r.changed_after_completion.join(', ')}\n${table}`,
      );
      assert.equal(r.unexplained_retried_lines, 0, table);
      assert.ok(scenarioPassed(r), table);
    } finally {
      await cluster.close();
      rmSync(opts.baseDir, { recursive: true, force: true });
    }
  },
);
