import path from 'node:path';
import YAML from 'yaml';
import { pivotMiningInputSchema } from '../../contracts/workflowInputs';
import type { RunPlan } from '../../contracts/payloads';
import { resolveInside } from './configFile';
import { configPathInside, loadRunContext, mustBeReadableFile, type WorkerSettings } from './runContext';
import { checkRunManifest, currentRunManifest, fileDigest, recordRunManifest } from './runManifest';
import { dropDamaged, inspectPublished, recordPublished, refuseUnrebuildable } from './publishedDigests';
import { RUN_MANIFEST_FILE } from '../../gym/runManifest';
import { mkdirDurably, writeFileDurably } from '../../gym/durable';
import { ENGINE_TIMELINE_DIR } from './engineTimeline';

/** A run without its own run_id is named after its workflow id, made safe for a directory name. */
export function defaultRunId(workflowId: string): string {
  return workflowId.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * Validates the workflow input and config, creates the run directory and snapshots the config in it.
 * A run id already used must name the same run: its manifest, and every file its steps published, are
 * checked before anything in the run directory is written, so a refused resume leaves the directory
 * exactly as it was. A damaged file the resume can make again is removed, with a line in the log.
 */
export async function prepareRun(settings: WorkerSettings, rawInput: unknown, workflowId: string): Promise<RunPlan> {
  const { input, configPath, config, baseDir, artifactsRoot } = await loadRunContext(
    settings,
    pivotMiningInputSchema,
    rawInput,
  );
  const runId = input.run_id ?? defaultRunId(workflowId);
  const runDir = resolveInside(artifactsRoot, artifactsRoot, path.join('runs', runId));
  const inputPath = await configPathInside(configPath, ['collect', 'input_jsonl'], baseDir, config.collect.input_jsonl);
  await mustBeReadableFile(configPath, ['collect', 'input_jsonl'], inputPath);
  if (config.servers.mode === 'embedded' && config.servers.faults?.events_jsonl) {
    await configPathInside(
      configPath,
      ['servers', 'faults', 'events_jsonl'],
      baseDir,
      config.servers.faults.events_jsonl,
    );
  }
  const manifest = currentRunManifest(config, {
    'collect.input_jsonl': await fileDigest(inputPath, config.collect.input_jsonl),
  });
  const damaged = await inspectPublished(runDir);
  refuseUnrebuildable(runDir, damaged, `run ${runId}`);
  const recorded = await checkRunManifest(runDir, manifest, `run ${runId}`);
  await mkdirDurably(runDir);
  await dropDamaged(runDir, damaged);
  await writeFileDurably(path.join(runDir, 'pipeline_config.yaml'), YAML.stringify(config));
  await recordRunManifest(runDir, manifest, recorded);
  await recordPublished(runDir, 'prepare', [path.join(runDir, RUN_MANIFEST_FILE)]);
  const localProfileBegun = recorded?.materialized['local_profile'] !== undefined;
  return {
    runId,
    runDir,
    baseDir,
    config,
    timelineDir: path.join(runDir, ENGINE_TIMELINE_DIR),
    ...(localProfileBegun ? { localProfileBegun } : {}),
  };
}
