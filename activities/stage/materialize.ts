import { rm } from 'node:fs/promises';
import path from 'node:path';
import { heartbeat, log } from '@temporalio/activity';
import { JsonlWriter, readJsonl } from '../../gym/jsonl';
import { mkdirDurably, syncFiles } from '../../gym/durable';
import { JsonlError } from '../../gym/errors';
import { ConfigError } from '../../contracts/errors';
import { materializeRecords, type MaterializedRecord, type MaterializeOptions } from '../../gym/materialize';
import { RoutingWarnings } from '../../gym/routingWarnings';
import { stageSettings } from '../../contracts/stageSettings';
import { workerMaterializeOptions } from '../run/legacyRouting';
import type { CollectStageInput, MaterializeResult, RolloutStage, RunPlan } from '../../contracts/payloads';
import {
  materializedInputsPath,
  mergedPaths,
  metaPath,
  offsetsPath,
  readMaterializedMeta,
  writeChunkIndex,
  type MaterializedMeta,
} from '../chunk/chunkIndex';
import { RowIndexWriter, rowIndexPath } from './rowIndex';
import { inInputOrder, interleaved } from './interleaveRepeats';
import { resolveInside } from '../run/configFile';
import { agentDirectory, environmentServerNamer, unknownAgentReason } from '../run/servers';
import { checkMaterializedInputs, readRunManifest } from '../run/runManifest';
import { recordPublished } from '../run/publishedDigests';
import { RUN_MANIFEST_FILE } from '../../gym/runManifest';

/**
 * Materializes task rows × num_repeats into `<out>_materialized_inputs.jsonl` with NeMo Gym's
 * semantics (rows round by round with `interleave_repeats`, as 0.7.0 orders them) and records where
 * each chunk starts. Idempotent: a finished materialization is reused, an interrupted one is redone
 * from scratch (it is cheap next to the rollouts).
 *
 * Collect routes every row to the agent its `agent_ref.name` names, so a name no server knows is
 * refused here, naming file and line, before any rollout runs; NeMo Gym would only find out when
 * the first such row is posted. Local profiling runs rows in-process, so its names route nothing.
 */
export async function materializeStage(input: CollectStageInput): Promise<MaterializeResult> {
  const { plan, stage, outPrefix } = input;
  const settings = stageSettings(plan, stage);
  const outFile = materializedInputsPath(outPrefix);
  const existing = await readMaterializedMeta(outPrefix);
  if (existing) {
    await checkMaterializedInputs(plan.runDir, stage, outFile);
    return materializeResult(outFile, existing);
  }

  // A stage materialized afresh has run no rollout yet, so a failures sidecar already at its path is
  // another run's (NeMo Gym #2723: ng_collect_rollouts appended to it); a resume took the branch above.
  await rm(mergedPaths(outPrefix).failuresPath, { force: true });

  // Collect reads user data from the worker's base dir; local profiling reads candidates the run wrote.
  const allowedRoot = stage === 'collect' ? plan.baseDir : plan.runDir;
  const source = resolveInside(allowedRoot, plan.baseDir, input.inputPath);
  const agents = stage === 'collect' ? await agentDirectory(plan) : undefined;
  await mkdirDurably(path.dirname(outFile));
  const writer = await JsonlWriter.open(outFile);
  const index = await RowIndexWriter.create(outPrefix);
  const chunkStarts: number[] = [];
  const taskIndices = new Set<number>();
  let rows = 0;
  try {
    const options = await workerMaterializeOptions(plan, stage);
    const records = warnedRecords(source, options);
    const materialized = settings.interleaveRepeats
      ? interleaved(records, `${outFile}.interleave`)
      : inInputOrder(records);
    for await (const { task, rollout, agentName, text, line } of materialized) {
      if (agents && !agents.has(agentName))
        throw new JsonlError(source, line, unknownAgentReason(plan, agentName, agents));
      if (rows % settings.chunkSize === 0) chunkStarts.push(writer.bytesWritten);
      const byteOffset = writer.bytesWritten;
      await writer.writeLine(`${text}\n`);
      await index.add({ task, rollout, agentName, byteOffset, byteLength: writer.bytesWritten - byteOffset });
      taskIndices.add(task);
      rows++;
      if (rows % 10_000 === 0) heartbeat({ rows });
    }
  } catch (err) {
    await index.abandon();
    throw err;
  } finally {
    await writer.close();
  }
  const agentNames = await index.close();
  await checkEnvironmentServers(plan, stage, agentNames);
  // The meta file written next marks the materialization finished, so the lines must outlive a power cut first.
  await syncFiles([outFile]);
  if (rows === 0) throw new ConfigError(`${source}: no task rows to materialize`);
  chunkStarts.push(writer.bytesWritten);
  const meta = {
    rows,
    tasks: taskIndices.size,
    chunks: chunkStarts.length - 1,
    chunkSize: settings.chunkSize,
    agentNames,
  };
  await writeChunkIndex(outPrefix, chunkStarts, meta);
  await checkMaterializedInputs(plan.runDir, stage, outFile);
  await recordMaterialized(plan.runDir, stage, outPrefix);
  return materializeResult(outFile, meta);
}

/**
 * 0.7.0 resolves every agent-routed row's environment server before it dispatches any, so an agent
 * that several servers front fails the run before a rollout, not at the finish that names the
 * aggregate-metrics entries (collect only: its files are 0.7.0's when the profile follows 0.7.0).
 */
async function checkEnvironmentServers(plan: RunPlan, stage: RolloutStage, agentNames: string[]): Promise<void> {
  if (stage !== 'collect' || (plan.config.profile.nemo_gym_version ?? '0.7.0') !== '0.7.0') return;
  const environmentServer = await environmentServerNamer(plan, stage);
  for (const agentName of agentNames) environmentServer(agentName);
}

/**
 * A stage's records, then 0.7.0's routing warnings once every row is routed, as ng_collect_rollouts
 * gives them, in the worker's log, where a run's user reads what its collection printed.
 */
async function* warnedRecords(source: string, options: MaterializeOptions): AsyncGenerator<MaterializedRecord> {
  const warnings = new RoutingWarnings(options.num_repeats);
  yield* materializeRecords(readJsonl(source), options, source, (route) => warnings.add(route));
  for (const message of warnings.messages()) log.warn(message);
}

/** The materialized files and the manifest that now records them, as published by this step. */
async function recordMaterialized(runDir: string, stage: string, outPrefix: string): Promise<void> {
  const files = [
    materializedInputsPath(outPrefix),
    offsetsPath(outPrefix),
    rowIndexPath(outPrefix),
    metaPath(outPrefix),
  ];
  if ((await readRunManifest(runDir)) !== undefined) files.push(path.join(runDir, RUN_MANIFEST_FILE));
  await recordPublished(runDir, `${stage} materialize`, files);
}

/** What the workflow gets: counts and a path (the agent names stay in the meta file, out of history). */
function materializeResult(
  materializedInputsPath: string,
  { rows, tasks, chunks }: MaterializedMeta,
): MaterializeResult {
  return { materializedInputsPath, rows, tasks, chunks };
}
