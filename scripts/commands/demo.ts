import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import YAML from 'yaml';
import { repoRoot } from '../../bin/built';
import { activityDepsFromEnv, type ActivityDeps } from '../../activities';
import { loadPipelineConfig } from '../../activities/run/configFile';
import { TASK_QUEUE } from '../../workers/connection';
import { connectClient, startPivotMining } from '../../client';
import type { PivotMiningResult } from '../../contracts/payloads';
import { followRun } from '../lib/follow';
import { ensureGemma, startLlamaServer, type LlamaServerHandle } from '../lib/llamaServer';
import { startLocalStack } from '../lib/localStack';
import { printResult } from '../lib/printResult';

const DEMO_CONFIG = 'configs/demo.yaml';
const REAL_MODEL_CONFIG = 'configs/demo_real_model.yaml';

/**
 * The config with `local_profile.model` pointed at the llama-server just started. It is written
 * under .state/ because the worker only reads configs inside its base directory, and the port is
 * only known now.
 */
async function withModelServer(configPath: string, server: LlamaServerHandle): Promise<string> {
  const config = YAML.parse(await readFile(configPath, 'utf8')) as Record<string, Record<string, unknown> | undefined>;
  const localProfile = (config.local_profile ??= {});
  const model = (localProfile.model ?? {}) as Record<string, unknown>;
  localProfile.model = { ...model, url: server.url, model: server.modelName };
  await mkdir('.state', { recursive: true });
  const derived = path.join('.state', `${path.basename(configPath, path.extname(configPath))}.llama-server.yaml`);
  await writeFile(derived, YAML.stringify(config));
  return derived;
}

/**
 * The demo's own config and tasks are read where the package keeps them (their paths are relative
 * to it) and its `artifacts_root` is taken from the current directory, so an installed package runs
 * the demo from any directory. PIVOT_MINER_ARTIFACTS_ROOT, an operator's setting, still wins.
 */
async function packagedDemoDeps(): Promise<ActivityDeps> {
  const fromEnv = activityDepsFromEnv();
  const config = await loadPipelineConfig(path.join(repoRoot, DEMO_CONFIG));
  const artifactsRoot = fromEnv.settings.artifactsRoot ?? path.resolve(config.artifacts_root);
  return { ...fromEnv, settings: { baseDir: repoRoot, artifactsRoot } };
}

async function startRealModel(): Promise<LlamaServerHandle> {
  console.error(
    '[real-model] locating Gemma 3 270M and llama-server (the first run builds llama-server: ~15 min on 2 cores)',
  );
  const install = ensureGemma();
  await mkdir('.state', { recursive: true });
  const logFile = path.resolve('.state', 'llama-server.log');
  const server = await startLlamaServer({ install, logFile });
  console.error(
    `[real-model] llama-server serving ${server.modelName} at ${server.url} (${server.slots} slots, log ${logFile})`,
  );
  return server;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'the main job end to end on the embedded default: dev server, worker, simulators, pipeline; prints the pivots.jsonl path last',
    )
    .option(
      '-c, --config <file>',
      `pipeline config (default ${DEMO_CONFIG}, or ${REAL_MODEL_CONFIG} with --real-model)`,
    )
    .option('--seed <n>', 'override the config seed', (v) => Number.parseInt(v, 10))
    .option(
      '--real-model',
      'local profiling by Gemma 3 270M on llama-server (started on a free port, stopped at the end) instead of the simulator',
    )
    .action(async (opts: { config?: string; seed?: number; realModel?: boolean }) => {
      const started = Date.now();
      const model = opts.realModel ? await startRealModel() : undefined;
      let result: PivotMiningResult | undefined;
      try {
        const configPath = model
          ? await withModelServer(opts.config ?? REAL_MODEL_CONFIG, model)
          : (opts.config ?? DEMO_CONFIG);
        // A config of the user's, or one derived under .state/, resolves against the current directory.
        const packaged = !model && opts.config === undefined;
        const stack = await startLocalStack(packaged ? { activityDeps: await packagedDemoDeps() } : {});
        console.error(`Temporal UI: ${stack.devServer.uiUrl}`);
        console.error(
          model
            ? `NOTE: collect runs on the embedded stack, whose policy is a SEEDED SIMULATOR; local profiling samples the REAL model ${model.modelName}.`
            : 'NOTE: the policy is a SEEDED SIMULATOR standing in for an LLM; every other server is real HTTP.',
        );
        try {
          await stack.worker.runUntil(async () => {
            const { client, close } = await connectClient();
            try {
              const workflowId = `pivot-mining-demo-${new Date().toISOString().replace(/[:.]/g, '-')}`;
              await startPivotMining(
                client,
                { config_path: configPath, seed: opts.seed },
                { workflowId, taskQueue: TASK_QUEUE },
              );
              console.error(`started ${workflowId}`);
              result = await followRun(client, workflowId);
            } finally {
              await close();
            }
          });
        } finally {
          await stack.shutdown();
        }
      } finally {
        await model?.stop();
      }
      console.error(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      if (result) printResult(result);
    });
}
