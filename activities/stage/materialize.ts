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
import { RowIndexWriter, rowIndexPath, type RowIndexNames } from './rowIndex';
import { inInputOrder, interleaved, type MaterializedLine } from './interleaveRepeats';
import { resolveInside } from '../run/configFile';
import { agentDirectory, environmentServerNamer, headGlobalConfig, unknownAgentReason } from '../run/servers';
import { stampedServerRefusal } from '../../gym/environmentServers';
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
  const { rows, tasks, chunkStarts, names } = await writeMaterialized(input, source, outFile);
  await checkEnvironmentServers(plan, stage, names);
  // The meta file written next marks the materialization finished, so the lines must outlive a power cut first.
  await syncFiles([outFile]);
  if (rows === 0) throw new ConfigError(`${source}: no task rows to materialize`);
  const meta = {
    rows,
    tasks,
    chunks: chunkStarts.length - 1,
    chunkSize: settings.chunkSize,
    ...names,
  };
  await writeChunkIndex(outPrefix, chunkStarts, meta);
  await checkMaterializedInputs(plan.runDir, stage, outFile);
  await recordMaterialized(plan.runDir, stage, outPrefix);
  return materializeResult(outFile, meta);
}

/** What writing a stage's materialized lines gave: rows and tasks, where each chunk starts then the end, the index's names. */
interface MaterializedLines {
  rows: number;
  tasks: number;
  chunkStarts: number[];
  names: RowIndexNames;
}

/** Writes the rows of `source`, each checked, to `outFile` and the row index, in the order they are dispatched. */
async function writeMaterialized(
  input: CollectStageInput,
  source: string,
  outFile: string,
): Promise<MaterializedLines> {
  const { plan, stage, outPrefix } = input;
  const settings = stageSettings(plan, stage);
  const checkRow = await rowChecks(plan, stage, source);
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
    for await (const materializedLine of materialized) {
      checkRow(materializedLine);
      const { task, rollout, agentName, environmentServer, text } = materializedLine;
      if (rows % settings.chunkSize === 0) chunkStarts.push(writer.bytesWritten);
      const byteOffset = writer.bytesWritten;
      await writer.writeLine(`${text}\n`);
      const stamp = environmentServer === undefined ? {} : { environmentServer };
      await index.add({ task, rollout, agentName, ...stamp, byteOffset, byteLength: writer.bytesWritten - byteOffset });
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
  chunkStarts.push(writer.bytesWritten);
  return { rows, tasks: taskIndices.size, chunkStarts, names: await index.close() };
}

/**
 * The checks of each row before it is written, naming its line: collect routes it to the agent its
 * `agent_ref.name` names, which a server must know, and through the server its data stamps, if any.
 */
async function rowChecks(plan: RunPlan, stage: RolloutStage, source: string): Promise<(row: MaterializedLine) => void> {
  const agents = stage === 'collect' ? await agentDirectory(plan) : undefined;
  const stampChecks = await stampedServerChecks(plan, stage);
  return ({ agentName, environmentServer, taskSource, line }) => {
    if (agents && !agents.has(agentName))
      throw new JsonlError(source, line, unknownAgentReason(plan, agentName, agents));
    const refusal =
      environmentServer === undefined ? undefined : stampChecks?.(environmentServer, { agentName, taskSource });
    if (refusal) throw new JsonlError(source, line, refusal);
  };
}

/** Whether a stage's aggregate metrics and profile follow 0.7.0's environment servers: collect's, when the profile follows 0.7.0. */
function followsEnvironmentServers(plan: RunPlan, stage: RolloutStage): boolean {
  return stage === 'collect' && (plan.config.profile.nemo_gym_version ?? '0.7.0') === '0.7.0';
}

/**
 * 0.7.0 resolves the environment server of every agent-routed row without a stamp before it
 * dispatches any, so an agent that several servers front fails the run before a rollout, not at the
 * finish that names the aggregate-metrics entries. A row whose data stamps a server goes through
 * that server instead (stampedServerChecks).
 */
async function checkEnvironmentServers(plan: RunPlan, stage: RolloutStage, names: RowIndexNames): Promise<void> {
  if (!followsEnvironmentServers(plan, stage)) return;
  const environmentServer = await environmentServerNamer(plan, stage);
  names.agentNames.forEach((agentName, i) => {
    if (names.environmentServers[i] === null) environmentServer(agentName);
  });
}

/**
 * Under agent routing, 0.7.0 posts a row whose data stamps `_ng_environment_server` to that server
 * once it has checked it against the head's config; pivot-miner posts it to its agent, which the
 * check requires the server to relay to. Legacy routing stamps every row with its checked relay.
 */
async function stampedServerChecks(
  plan: RunPlan,
  stage: RolloutStage,
): Promise<((server: string, row: { agentName: string; taskSource?: string }) => string | undefined) | undefined> {
  if (!followsEnvironmentServers(plan, stage) || stageSettings(plan, stage).legacyEnvironmentServer !== undefined)
    return undefined;
  const config = await headGlobalConfig(plan);
  return (server, row) => stampedServerRefusal(config, server, row);
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
