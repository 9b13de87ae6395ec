import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { loadPipelineConfig } from '../../activities/run/configFile';
import type { CollectStageResult } from '../../contracts/payloads';
import { startWorkerTestEnv } from '../helpers/temporal';

// Shared setup of the pool tests: a dev server, a worker, and a base directory holding the example
// nightly config (configs/nightly.yaml) as it ships, plus NeMo Gym rollouts collected once from the demo tasks by the
// embedded simulator and split into per-night source files by task.

const repoRoot = path.resolve(__dirname, '../..');

export interface PoolTestContext {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  baseDir: string;
  configPath: string;
  /** Source rollouts files by name (`night1.jsonl`...), written outside the sources directory. */
  rolloutFiles: Record<string, string>;
  close: () => Promise<void>;
}

export async function setupPoolTest(
  taskQueue: string,
  splits: Record<string, (taskIndex: number) => boolean>,
): Promise<PoolTestContext> {
  const baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-pool-'));
  mkdirSync(path.join(baseDir, 'configs'));
  copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'configs/demo_tasks.jsonl'));
  const configPath = 'configs/nightly.yaml';
  copyFileSync(path.join(repoRoot, configPath), path.join(baseDir, configPath));
  const stack = await startWorkerTestEnv(taskQueue, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
  const env = stack.env;

  const close = async () => {
    await stack.stop();
    rmSync(baseDir, { recursive: true, force: true });
  };

  try {
    const runDir = path.join(baseDir, 'collected');
    mkdirSync(runDir);
    const plan = {
      runId: 'collected',
      runDir,
      baseDir,
      config: await loadPipelineConfig(path.join(baseDir, configPath)),
    };
    const collected = (await env.client.workflow.execute('collectRolloutsWorkflow', {
      taskQueue,
      workflowId: 'collect-sources',
      args: [
        {
          plan,
          stage: 'collect',
          inputPath: plan.config.collect.input_jsonl,
          outPrefix: path.join(runDir, 'rollouts'),
        },
      ],
    })) as CollectStageResult;
    const lines = readFileSync(collected.merge.rolloutsPath, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const rolloutFiles: Record<string, string> = {};
    for (const [name, keep] of Object.entries(splits)) {
      const file = path.join(runDir, name);
      writeFileSync(
        file,
        lines
          .filter((l) => keep((JSON.parse(l) as { _ng_task_index: number })._ng_task_index))
          .map((l) => `${l}\n`)
          .join(''),
      );
      rolloutFiles[name] = file;
    }
    return { env, taskQueue, baseDir, configPath, rolloutFiles, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Puts a collected rollouts file where the config's pool.sources glob (incoming/rollouts/**) finds it. */
export function addSource(ctx: PoolTestContext, name: string, as: string = name): string {
  const dest = path.join(ctx.baseDir, 'incoming/rollouts', as);
  mkdirSync(path.dirname(dest), { recursive: true });
  copyFileSync(ctx.rolloutFiles[name]!, dest);
  return path.relative(ctx.baseDir, dest);
}
