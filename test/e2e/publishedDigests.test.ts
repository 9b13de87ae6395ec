import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { PUBLISHED_DIGESTS_FILE, publishedDigestsSchema } from '../../gym/publishedDigests';
import { RUN_MANIFEST_FILE } from '../../gym/runManifest';
import { causeMessages } from '../helpers/runDir';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// Files damaged between two runs of the same run id, on a real dev server and worker: a truncated
// index the resume reuses and a changed pivots file it rewrites are each named in the worker's log
// with the recorded and the found digest, and the resumed run publishes the bytes of the first; a
// run manifest cut short, which nothing can rebuild, is refused with the same naming.

const TASK_QUEUE = 'pivot-mining-digests-test';
const RUN_ID = 'digests';
const warnings: string[] = [];
let stack: WorkerTestEnv | undefined;
let artifactsRoot: string;

before(async () => {
  // The worker's log, kept to look at: activities log through the Runtime's logger.
  Runtime.install({ logger: new DefaultLogger('WARN', (entry) => warnings.push(entry.message)) });
  artifactsRoot = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-digests-'));
  stack = await startWorkerTestEnv(TASK_QUEUE, { PIVOT_MINER_ARTIFACTS_ROOT: artifactsRoot });
});

after(async () => {
  await stack?.stop();
  rmSync(artifactsRoot, { recursive: true, force: true });
});

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

const run = (workflowId: string) =>
  runPivotMining(stack!.env.client, {
    taskQueue: TASK_QUEUE,
    configPath: 'configs/demo.yaml',
    runId: RUN_ID,
    workflowId,
  });

/** Every file the sidecar records, with its bytes. */
function publishedFiles(runDir: string): Map<string, Buffer> {
  const sidecar = publishedDigestsSchema.parse(
    JSON.parse(readFileSync(path.join(runDir, PUBLISHED_DIGESTS_FILE), 'utf8')),
  );
  return new Map(Object.keys(sidecar.files).map((file) => [file, readFileSync(path.join(runDir, file))]));
}

test(
  'a resume names each damaged file with both digests, rebuilds it, and refuses a manifest cut short',
  { timeout: 900_000 },
  async () => {
    const first = await run('digests-first');
    const runDir = first.runDir;
    const published = publishedFiles(runDir);
    for (const file of [
      'rollouts_materialized_inputs.rows.bin',
      'dataset/pivots.jsonl',
      'local_profile.jsonl',
      RUN_MANIFEST_FILE,
    ])
      assert.ok(published.has(file), `${file} is recorded`);
    const sidecar = readFileSync(path.join(runDir, PUBLISHED_DIGESTS_FILE));

    // A reused file cut short, and a byte of a rewritten one changed.
    const rowIndex = published.get('rollouts_materialized_inputs.rows.bin')!;
    const half = Math.floor(rowIndex.length / 2);
    truncateSync(path.join(runDir, 'rollouts_materialized_inputs.rows.bin'), half);
    const pivots = Buffer.from(published.get('dataset/pivots.jsonl')!);
    pivots[pivots.indexOf('"responses_create_params"') + 2] ^= 0x20;
    writeFileSync(path.join(runDir, 'dataset/pivots.jsonl'), pivots);

    const resumed = await run('digests-resumed');
    assert.equal(resumed.counts.published, first.counts.published);
    const named = (file: string, kind: string, found: Buffer) =>
      warnings.find((w) =>
        w.startsWith(
          `${runDir}/${file} is ${kind} since it was published: expected sha256 ${sha256(published.get(file)!)} ` +
            `(${published.get(file)!.length} bytes), found sha256 ${sha256(found)} (${found.length} bytes); a resume`,
        ),
      );
    assert.ok(
      named('rollouts_materialized_inputs.rows.bin', 'truncated', rowIndex.subarray(0, half)),
      warnings.join('\n'),
    );
    assert.ok(named('dataset/pivots.jsonl', 'changed', pivots), warnings.join('\n'));
    for (const [file, bytes] of publishedFiles(runDir))
      assert.ok(bytes.equals(published.get(file)!), `${file} holds the bytes of the first run again`);
    assert.ok(readFileSync(path.join(runDir, PUBLISHED_DIGESTS_FILE)).equals(sidecar));

    // The run's identity record, cut short: nothing can rebuild it.
    const manifest = published.get(RUN_MANIFEST_FILE)!;
    const truncated = manifest.subarray(0, Math.floor(manifest.length / 2));
    writeFileSync(path.join(runDir, RUN_MANIFEST_FILE), truncated);
    await assert.rejects(run('digests-refused'), (err) => {
      assert.ok(err instanceof WorkflowFailedError);
      const messages = causeMessages(err);
      assert.ok(
        messages.includes(
          `${runDir}/${RUN_MANIFEST_FILE} is truncated since it was published: expected sha256 ${sha256(manifest)} ` +
            `(${manifest.length} bytes), found sha256 ${sha256(truncated)} (${truncated.length} bytes); ` +
            'it cannot be rebuilt, so the run refuses to resume',
        ),
        messages,
      );
      return true;
    });
  },
);
