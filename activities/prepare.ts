import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import YAML from 'yaml';
import { pivotMiningInputSchema } from '../workflows/input';
import type { RunPlan } from '../workflows/types';
import { ConfigError, describeIssues, loadPipelineConfig, resolveInside } from './config';

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
  try {
    const configPath = resolveInside(baseDir, baseDir, input.config_path);
    const config = await loadPipelineConfig(configPath);
    if (input.seed !== undefined) config.seed = input.seed;
    const artifactsRoot = path.resolve(baseDir, process.env.PIVOT_MINER_ARTIFACTS_ROOT ?? config.artifacts_root);
    const runId = input.run_id ?? workflowId.replace(/[^A-Za-z0-9._-]/g, '_');
    const runDir = resolveInside(artifactsRoot, artifactsRoot, path.join('runs', runId));
    resolveInside(baseDir, baseDir, config.collect.input_jsonl);
    await mkdir(runDir, { recursive: true });
    await writeFile(path.join(runDir, 'pipeline_config.yaml'), YAML.stringify(config));
    return { runId, runDir, baseDir, config };
  } catch (err) {
    if (err instanceof ConfigError) throw ApplicationFailure.nonRetryable(err.message, 'ConfigError');
    throw err;
  }
}
