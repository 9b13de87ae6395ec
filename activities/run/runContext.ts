import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import type { PipelineConfig } from '../../contracts/config';
import { describeIssues } from '../../contracts/config';
import { ConfigError, InvalidInputError } from '../../contracts/errors';
import { configKeyLocation, loadPipelineConfig, resolveInside } from './configFile';

// The one loader of workflow input + pipeline config for every workflow (mining, nightly,
// curriculum). Every path a workflow start can name, directly or through its config, must stay
// inside the worker's base directory, so starting a workflow cannot make a worker read or write
// elsewhere; only the worker operator's own settings (PIVOT_MINER_*) are trusted as given.

/** What the worker process was started with: read once, when activities are created. */
export interface WorkerSettings {
  /** The directory config paths and workflow inputs resolve against. */
  baseDir: string;
  /** The operator's artifacts root, overriding every config's `artifacts_root`. */
  artifactsRoot?: string;
}

export function workerSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const baseDir = path.resolve(env.PIVOT_MINER_BASE_DIR ?? process.cwd());
  return {
    baseDir,
    artifactsRoot: env.PIVOT_MINER_ARTIFACTS_ROOT ? path.resolve(baseDir, env.PIVOT_MINER_ARTIFACTS_ROOT) : undefined,
  };
}

export interface RunContext<I> {
  input: I;
  configPath: string;
  config: PipelineConfig;
  baseDir: string;
  artifactsRoot: string;
}

type ConfigInput = { config_path: string; seed?: number };

/** Validates a workflow input, loads its config and resolves the artifacts root inside the base dir. */
export async function loadRunContext<S extends z.ZodType<ConfigInput>>(
  settings: WorkerSettings,
  schema: S,
  rawInput: unknown,
): Promise<RunContext<z.infer<S>>> {
  const parsed = schema.safeParse(rawInput);
  if (!parsed.success) throw new InvalidInputError(describeIssues('workflow input', parsed.error));
  const input = parsed.data;
  const { baseDir } = settings;
  let configPath: string;
  try {
    configPath = resolveInside(baseDir, baseDir, input.config_path);
  } catch (err) {
    if (err instanceof ConfigError) throw new InvalidInputError(`workflow input: config_path: ${err.message}`);
    throw err;
  }
  const config = await loadPipelineConfig(configPath);
  if (input.seed !== undefined) config.seed = input.seed;
  const artifactsRoot =
    settings.artifactsRoot ?? (await configPathInside(configPath, ['artifacts_root'], baseDir, config.artifacts_root));
  return { input, configPath, config, baseDir, artifactsRoot };
}

/** A path the config names, confined to `root`; the error points at the config key's line. */
export async function configPathInside(
  configPath: string,
  key: string[],
  root: string,
  value: string,
): Promise<string> {
  try {
    return resolveInside(root, root, value);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(`${await configKeyLocation(configPath, key)}: ${key.join('.')}: ${err.message}`);
  }
}

/** The pool directory of a config, inside the artifacts root (`pool.dir`, default pools/<name>). */
export async function poolDirOf(ctx: RunContext<unknown>): Promise<string> {
  return configPathInside(
    ctx.configPath,
    ['pool', 'dir'],
    ctx.artifactsRoot,
    ctx.config.pool.dir ?? path.join('pools', ctx.config.name),
  );
}

// Checked up front, where the failure is non-retryable, instead of letting a stage's reader
// retry a missing file until its attempts run out.
export async function mustBeReadableFile(configPath: string, key: string[], file: string): Promise<void> {
  let reason: string | undefined;
  try {
    if (!(await stat(file)).isFile()) reason = 'is not a regular file';
  } catch (err) {
    reason = `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
  if (reason) throw new ConfigError(`${await configKeyLocation(configPath, key)}: ${key.join('.')}: ${file} ${reason}`);
}
