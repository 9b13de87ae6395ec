import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { envVarsRead, sourceTexts, undocumentedEnvVars, unreadEnvVars } from '../../../scripts/cliReference/envScan';

const root = path.resolve(__dirname, '../../..');

test('every environment variable the sources read is in docs/cli.md, and every one there is read', () => {
  const read = envVarsRead(sourceTexts(root));
  assert.ok(read.has('PIVOT_MINER_TASK_QUEUE') && read.has('TEMPORAL_BIN'), 'the scan finds known variables');
  assert.deepEqual(undocumentedEnvVars(read), []);
  assert.deepEqual(unreadEnvVars(read), []);
});

test('a variable read in any of the spellings the scan knows is reported until documented', () => {
  const planted = [
    { file: 'workers/a.ts', text: 'const port = process.env.PIVOT_MINER_PLANTED_A ?? 1;' },
    { file: 'workers/b.ts', text: "const B_ENV = 'PIVOT_MINER_PLANTED_B';\nconst b = env[B_ENV];" },
    { file: 'bin/c.js', text: "if (process.env['PIVOT_MINER_PLANTED_C']) run();" },
    { file: 'scripts/d.sh', text: 'dir="${PIVOT_MINER_PLANTED_D:-/tmp}"' },
    { file: 'bin/pivot-miner', text: 'mb="${PIVOT_MINER_WORKER_HEAP_MB:-1024}"\nexec node "$PATH"' },
  ];
  assert.deepEqual(undocumentedEnvVars(envVarsRead(planted)), [
    'PIVOT_MINER_PLANTED_A (workers/a.ts)',
    'PIVOT_MINER_PLANTED_B (workers/b.ts)',
    'PIVOT_MINER_PLANTED_C (bin/c.js)',
    'PIVOT_MINER_PLANTED_D (scripts/d.sh)',
  ]);
});

test('a documented variable no source reads any more is reported', () => {
  const unread = unreadEnvVars(envVarsRead([]));
  assert.ok(unread.includes('PIVOT_MINER_DEV_PORT'), unread.join(', '));
  assert.ok(!unread.includes('TEMPORAL_NAMESPACE'), 'a variable a library reads is not expected in our sources');
});
