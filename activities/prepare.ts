import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import YAML from 'yaml';
import { pivotMiningInputSchema } from '../workflows/input';
import type { RunPlan } from '../workflows/types';
import { ConfigError, configKeyLocation, describeIssues, loadPipelineConfig, resolveInside } from './config';

/**
 * The directory that config paths and workflow inputs resolve against. Everything a workflow input
 * names must stay inside it, so a workflow start cannot make a worker read or write elsewhere.
 */
export function workerBaseDir(): string {
  return path.resolve(process.env.PIVOT_MINER_BASE_DIR ?? process.cwd());
}

/** Validates the workflow input and config, creates the run directory and snapshots the config in it. */
export async function prepareRun(rawInput: unknown, workflowId: string): Promise<RunPlan> {
  const parsed = pivotMiningInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw ApplicationFailure.nonRetryable(describeIssues('workflow input', parsed.error), 'InvalidInput');
  }
  const input = parsed.data;
  const baseDir = workerBaseDir();
  let configPath = input.config_path;
  try {
    configPath = resolveInside(baseDir, baseDir, input.config_path);
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(`workflow input: config_path: ${err.message}`, 'InvalidInput');
    throw err;
  }
  try {
    const config = await loadPipelineConfig(configPath);
    if (input.seed !== undefined) config.seed = input.seed;
    // The worker operator's PIVOT_MINER_ARTIFACTS_ROOT is trusted; a config's artifacts_root, like
    // every other path a workflow start can name, must stay inside the worker's base dir.
    const artifactsRoot = process.env.PIVOT_MINER_ARTIFACTS_ROOT
      ? path.resolve(baseDir, process.env.PIVOT_MINER_ARTIFACTS_ROOT)
      : await configPathInside(configPath, ['artifacts_root'], baseDir, config.artifacts_root);
    const runId = input.run_id ?? workflowId.replace(/[^A-Za-z0-9._-]/g, '_');
    const runDir = resolveInside(artifactsRoot, artifactsRoot, path.join('runs', runId));
    const inputPath = await configPathInside(configPath, ['collect', 'input_jsonl'], baseDir, config.collect.input_jsonl);
    await mustBeReadableFile(configPath, ['collect', 'input_jsonl'], inputPath);
    if (config.servers.mode === 'embedded' && config.servers.faults?.events_jsonl) {
      await configPathInside(configPath, ['servers', 'faults', 'events_jsonl'], baseDir, config.servers.faults.events_jsonl);
    }
    await mkdir(runDir, { recursive: true });
    await writeFile(path.join(runDir, 'pipeline_config.yaml'), YAML.stringify(config));
    return { runId, runDir, baseDir, config };
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
}

async function configPathInside(configPath: string, key: string[], root: string, value: string): Promise<string> {
  try {
    return resolveInside(root, root, value);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`${await configKeyLocation(configPath, key)}: ${key.join('.')}: ${err.message}`);
  }
}

// Checked here, where the failure is non-retryable, instead of letting the collect stage's reader
// retry a missing file until its attempts run out.
async function mustBeReadableFile(configPath: string, key: string[], file: string): Promise<void> {
  let reason: string | undefined;
  try {
    if (!(await stat(file)).isFile()) reason = 'is not a regular file';
  } catch (err) {
    reason = `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
  if (reason) throw new ConfigError(`${await configKeyLocation(configPath, key)}: ${key.join('.')}: ${file} ${reason}`);
}
