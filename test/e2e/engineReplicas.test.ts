import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import YAML from 'yaml';
import { replicaStats, type ReplicaStats } from '../../activities/http/replicas';
import { pivotMiningProgressQuery, stageProgressQuery } from '../../contracts/temporal';
import type { PivotMiningResult, StageProgress } from '../../contracts/payloads';
import { freePort, portOpen } from '../../scripts/lib/net';
import { stopProcess } from '../../scripts/lib/workerProcess';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// Local profiling against an engine served as two replicas, each its own policy simulator process
// (`pivot-miner simulators` with a per-call latency and a fixed number of slots, so the engines bound
// the run), given as a list in local_profile.model.url. One replica is SIGKILLed in the middle of
// local profiling and started again: the run completes with every sample, byte for byte what the
// embedded simulator of the same seed gives; the killed replica's share went to the other one, and it
// took requests again once it was back.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-replicas-test';
const SEED = 7;
let workerEnv: WorkerTestEnv | undefined;
let baseDir: string;
const engines = new Set<ChildProcess>();

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-replicas-'));
  workerEnv = await startWorkerTestEnv(TASK_QUEUE, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
});

after(async () => {
  await Promise.all([...engines].map((e) => stopProcess(e, 'SIGKILL')));
  await workerEnv?.stop();
  rmSync(baseDir, { recursive: true, force: true });
});

/** A policy simulator process as a user starts one; resolves once it accepts connections on `port`. */
async function startEngine(port: number): Promise<{ url: string; child: ChildProcess }> {
  const args = [
    'simulators',
    '--seed',
    String(SEED),
    '--model-port',
    String(port),
    '--latency-ms',
    '40',
    '--slots',
    '4',
  ];
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  engines.add(child);
  child.once('exit', () => engines.delete(child));
  for (let i = 0; !(await portOpen(port)); i++) {
    assert.ok(i < 600 && child.exitCode === null, 'the engine process did not start');
    await sleep(50);
  }
  return { url: `http://127.0.0.1:${port}`, child };
}

function writeConfig(name: string, modelUrl?: string[]): string {
  const config = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8')) as Record<string, any>;
  config.collect.input_jsonl = 'demo_tasks.jsonl';
  // The kill is aimed at the local-profile stage's own progress, so its samples must be taken there,
  // not early beside collect (test/e2e/overlap.test.ts and the fleet cover engines under overlap).
  config.overlap = false;
  // Four requests in flight per replica (its slots): the run is bound by the engines, not the worker.
  config.local_profile = {
    ...config.local_profile,
    chunk_size: 64,
    model: modelUrl ? { url: modelUrl, max_concurrency: 4 } : {},
  };
  writeFileSync(path.join(baseDir, `${name}.yaml`), YAML.stringify(config));
  return `${name}.yaml`;
}

async function localProfileProgress(workflowId: string): Promise<StageProgress | undefined> {
  const client = workerEnv!.env.client;
  try {
    const progress = await client.workflow.getHandle(workflowId).query(pivotMiningProgressQuery);
    if (!progress.childWorkflowId) return undefined;
    const stage = await client.workflow.getHandle(progress.childWorkflowId).query(stageProgressQuery);
    return stage.stage.startsWith('local_profile') ? stage : undefined;
  } catch {
    return undefined;
  }
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

test(
  'local profiling over two engine replicas, one killed mid-run: every sample present, as the single engine gives them',
  { timeout: 300_000 },
  async () => {
    copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'demo_tasks.jsonl'));
    const client = workerEnv!.env.client;
    const run = (runId: string, configPath: string) =>
      client.workflow.start('pivotMiningWorkflow', {
        taskQueue: TASK_QUEUE,
        workflowId: runId,
        args: [{ config_path: configPath, run_id: runId }],
      });

    const reference = (await (await run('reference', writeConfig('reference'))).result()) as PivotMiningResult;

    const [first, second] = [await startEngine(await freePort()), await startEngine(await freePort())];
    const handle = await run('replicas', writeConfig('replicas', [first.url, second.url]));
    const stats = (url: string): ReplicaStats | undefined => replicaStats().find((s) => s.endpoint === url);
    const answered = (s: ReplicaStats) => s.requests - [...s.failures.values()].reduce((a, b) => a + b, 0);
    // Killed once it has served about a tenth of the stage's samples, then started again on its port.
    let killedAt: StageProgress | undefined;
    for (let i = 0; i < 6000 && !killedAt; i++) {
      const progress = await localProfileProgress(handle.workflowId);
      const served = stats(first.url)?.requests ?? 0;
      if (progress && progress.total > 0 && served > 0 && served >= progress.total / 10) killedAt = progress;
      else await sleep(20);
    }
    assert.ok(killedAt, 'local profiling never reached the first replica');
    await stopProcess(first.child, 'SIGKILL');
    const servedBeforeKill = answered(stats(first.url)!);
    const restarted = await startEngine(Number(new URL(first.url).port));
    const servedBeforeRestart = answered(stats(first.url)!);
    const result = (await handle.result()) as PivotMiningResult;
    await stopProcess(restarted.child);

    const samples = lines(path.join(result.runDir, 'local_profile.jsonl'));
    assert.equal(samples.length, reference.counts.candidates! * 8, 'every candidate has its 8 samples');
    assert.equal(result.counts.local_profile_failures, 0);
    // Not even an attempt failed: the requests cut off on the killed replica moved within their attempt.
    const failuresFile = path.join(result.runDir, 'local_profile_failures.jsonl');
    assert.deepEqual(existsSync(failuresFile) ? lines(failuresFile) : [], []);
    assert.equal(
      readFileSync(path.join(result.runDir, 'local_profile.jsonl'), 'utf8'),
      readFileSync(path.join(reference.runDir, 'local_profile.jsonl'), 'utf8'),
    );
    assert.equal(readFileSync(result.pivotsPath, 'utf8'), readFileSync(reference.pivotsPath, 'utf8'));
    assert.deepEqual(result.counts, reference.counts);

    const killed = stats(first.url)!;
    const survivor = stats(second.url)!;
    assert.ok((killed.failures.get('connection') ?? 0) > 0, 'requests to the killed replica failed and moved');
    assert.equal(answered(killed) + answered(survivor), samples.length, 'each sample was answered once');
    assert.ok(answered(killed) > servedBeforeRestart, 'the killed replica took requests again once it was back');
    console.log(
      JSON.stringify({
        samples: samples.length,
        killed_when: `${killedAt.done}/${killedAt.total} of ${killedAt.stage}`,
        killed_replica: {
          answered_before_kill: servedBeforeKill,
          answered_while_down: servedBeforeRestart - servedBeforeKill,
          answered_after_restart: answered(killed) - servedBeforeRestart,
          failures: Object.fromEntries(killed.failures),
        },
        surviving_replica: { answered: answered(survivor), failures: Object.fromEntries(survivor.failures) },
        local_profile_failures: result.counts.local_profile_failures,
        failed_attempts: existsSync(failuresFile) ? lines(failuresFile).length : 0,
        identical_to_single_engine: true,
      }),
    );
  },
);
