import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { freePort, portOpen } from '../../scripts/lib/net';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// `servers.mode: spawn` (the ng_run step): the worker starts the simulator stack as a managed child
// process through the host-pinned activity, the run uses it, and it is stopped when the run ends.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-spawn-test';
let env: TestWorkflowEnvironment;
let baseDir: string;
let worker: ChildProcess;

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-spawn-'));
  env = await startTestTemporal();
  worker = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    baseDir,
    artifactsRoot: path.join(baseDir, 'artifacts'),
  });
});

after(async () => {
  if (worker) await stopProcess(worker);
  await env?.teardown();
  rmSync(baseDir, { recursive: true, force: true });
});

test(
  'spawned server stack serves the run and is stopped when the workflow finishes',
  { timeout: 600_000 },
  async () => {
    copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'demo_tasks.jsonl'));
    const headPort = await freePort();
    const config = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8')) as Record<string, any>;
    config.collect.input_jsonl = 'demo_tasks.jsonl';
    config.servers = {
      mode: 'spawn',
      command: [
        process.execPath,
        path.join(repoRoot, 'bin/pivot-miner.js'),
        'simulators',
        '--seed',
        '7',
        '--head-port',
        String(headPort),
      ],
      head_url: `http://127.0.0.1:${headPort}`,
      ready_timeout_s: 120,
    };
    writeFileSync(path.join(baseDir, 'spawn.yaml'), YAML.stringify(config));
    const embeddedConfig = { ...config, servers: { mode: 'embedded' } };
    writeFileSync(path.join(baseDir, 'embedded.yaml'), YAML.stringify(embeddedConfig));

    const run = (runId: string, configPath: string) =>
      runPivotMining(env.client, { taskQueue: TASK_QUEUE, configPath, runId });

    const spawned = await run('spawned', 'spawn.yaml');
    assert.equal(await portOpen(headPort), false, 'the spawned stack is stopped after the run');
    const embedded = await run('embedded', 'embedded.yaml');
    assert.equal(readFileSync(spawned.pivotsPath, 'utf8'), readFileSync(embedded.pivotsPath, 'utf8'));
    assert.match(readFileSync(path.join(spawned.runDir, 'servers.log'), 'utf8'), /head\s+http:\/\/127\.0\.0\.1/);
  },
);
