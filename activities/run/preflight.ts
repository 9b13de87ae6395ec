import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError, InvalidInputError } from '../../contracts/errors';
import type { RunPlan } from '../../contracts/payloads';
import { pivotMiningInputSchema, type PivotMiningInput } from '../../contracts/workflowInputs';
import { JsonlError } from '../../gym/errors';
import { readJsonl } from '../../gym/jsonl';
import { materializeRecords, type MaterializeOptions } from '../../gym/materialize';
import type { RowRoute } from '../../gym/agentRouting';
import { RoutingWarnings } from '../../gym/routingWarnings';
import { workerMaterializeOptions } from './legacyRouting';
import { RequestFailure } from '../http/client';
import { endpointProblems, type Findings } from './preflightEndpoints';
import { taskDataFindings } from './preflightTaskData';
import {
  configPathInside,
  loadRunContext,
  mustBeReadableFile,
  type RunContext,
  type WorkerSettings,
} from './runContext';
import { checkRunManifest, currentRunManifest, fileDigest, readRunManifest } from './runManifest';
import { inspectPublished } from './publishedDigests';
import { damageLine } from '../../gym/publishedDigests';

// Everything a run would refuse, found on the machine that starts it before Temporal is involved:
// `pivot-miner check` and `pivot-miner run` call this. It only reads files and asks servers, so a
// check writes nothing, and every problem found is listed rather than the first.

/** The stages of pivotMiningWorkflow, in order. */
export const PIVOT_MINING_STAGES = ['prepare', 'collect', 'convert', 'local_profile', 'publish'] as const;

/** What a run of the config would do, as far as it is known before it starts. */
export interface RunOutline {
  configPath: string;
  runDir: string;
  inputPath: string;
  inputRows: number;
  /** False when the input has a bad line: the counts are of the rows before it. */
  inputComplete: boolean;
  tasks: number;
  numRepeats: number | Record<string, number>;
  /** Whether collect.fan_out runs rows on several agents. */
  fanOut: boolean;
  /** The rows collect will materialize: rows × num_repeats, per agent with fan_out or a num_repeats dict. */
  rollouts: number;
  /** K: local profiling samples each pivot candidate this many times (candidates are known after convert). */
  samplesPerCandidate: number;
  agents: string[];
}

export interface PreflightReport extends Findings {
  /** Absent when the config itself cannot be used. */
  outline?: RunOutline;
}

interface InputScan {
  inputPath: string;
  inputRows: number;
  tasks: number;
  rollouts: number;
  complete: boolean;
  /** Each agent_ref.name the rows route to, and the first line naming it. */
  agentLines: Map<string, number>;
}

/**
 * Checks a workflow input as a worker with `settings` would see it. `runId` names the run directory
 * (a run's own id, or the one its workflow id gives); `env` holds the API keys configs name.
 */
export async function preflight(
  settings: WorkerSettings,
  input: PivotMiningInput,
  runId: string,
  env: NodeJS.ProcessEnv,
): Promise<PreflightReport> {
  let ctx: RunContext<PivotMiningInput>;
  try {
    ctx = await loadRunContext(settings, pivotMiningInputSchema, input);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof InvalidInputError || err instanceof JsonlError)
      return { problems: err.message.split('\n'), notes: [] };
    throw err;
  }
  const findings: Findings = { problems: [], notes: [] };
  const plan: RunPlan = {
    runId,
    runDir: path.join(ctx.artifactsRoot, 'runs', runId),
    baseDir: ctx.baseDir,
    config: ctx.config,
  };
  const scan = await scanInputs(ctx, plan, findings);
  if (scan) await taskDataFindings(ctx, scan.inputPath, findings);
  const endpoints = await endpointProblems(ctx, plan, scan?.agentLines ?? new Map(), scan?.inputPath ?? '', env);
  findings.problems.push(...endpoints.problems);
  findings.notes.push(...endpoints.notes);
  if (!scan) return findings;
  await checkResume(ctx, plan, scan.inputPath, findings);
  return { ...findings, outline: outlineOf(ctx, plan, scan) };
}

function outlineOf(ctx: RunContext<unknown>, plan: RunPlan, scan: InputScan): RunOutline {
  const { collect } = plan.config;
  return {
    configPath: ctx.configPath,
    runDir: plan.runDir,
    inputPath: scan.inputPath,
    inputRows: scan.inputRows,
    inputComplete: scan.complete,
    tasks: scan.tasks,
    numRepeats: collect.num_repeats,
    fanOut: collect.fan_out !== undefined,
    rollouts: scan.rollouts,
    samplesPerCandidate: ctx.config.local_profile.num_samples,
    agents: [...scan.agentLines.keys()],
  };
}

/**
 * Reads the task rows as materialization will: counts rows, tasks and rollouts (fan-out and a
 * num_repeats dict make them per row) and notes which agents they route to. Stops at the first bad
 * line, as a run would, but keeps what it counted so the agents named before it are still checked.
 */
async function scanInputs(
  ctx: RunContext<unknown>,
  plan: RunPlan,
  { problems, notes }: Findings,
): Promise<InputScan | undefined> {
  const { config, configPath, baseDir } = ctx;
  const key = ['collect', 'input_jsonl'];
  let inputPath: string;
  try {
    inputPath = await configPathInside(configPath, key, baseDir, config.collect.input_jsonl);
    await mustBeReadableFile(configPath, key, inputPath);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(err.message);
    return undefined;
  }
  const scan: InputScan = { inputPath, inputRows: 0, tasks: 0, rollouts: 0, complete: false, agentLines: new Map() };
  const tasks = new Set<number>();
  let options: MaterializeOptions;
  try {
    options = await workerMaterializeOptions(plan, 'collect');
  } catch (err) {
    // Legacy routing asks the head server for the relay's agent; the endpoint checks say why it is down.
    if (!(err instanceof ConfigError || err instanceof RequestFailure)) throw err;
    if (err instanceof RequestFailure && config.servers.mode === 'spawn')
      notes.push(
        "collect.environment_server_name: the relay's agent is in the spawned head's config, which cannot be " +
          'read before ng_run starts; the run reads it, and checks the rows, when it materializes them',
      );
    else problems.push(err.message);
    return scan;
  }
  let lastLine = 0;
  const warnings = new RoutingWarnings(options.num_repeats);
  try {
    const routed = (route: RowRoute) => warnings.add(route);
    for await (const { row, line } of materializeRecords(readJsonl(inputPath), options, inputPath, routed)) {
      if (line !== lastLine) scan.inputRows++;
      lastLine = line;
      scan.rollouts++;
      tasks.add(row._ng_task_index);
      if (!scan.agentLines.has(row.agent_ref.name)) scan.agentLines.set(row.agent_ref.name, line);
    }
    scan.complete = true;
    // What 0.7.0's ng_collect_rollouts warns about these rows; the run logs it too.
    notes.push(...warnings.messages());
    if (scan.inputRows === 0) problems.push(`${inputPath}: no task rows`);
  } catch (err) {
    if (!(err instanceof JsonlError)) throw err;
    problems.push(err.message);
  }
  scan.tasks = tasks.size;
  return scan;
}

/**
 * A run id already used must name the same run (config and inputs), or the run refuses to resume;
 * each file its steps published that is damaged since is a note (the resume makes it again or checks
 * it) or a problem (the resume refuses there, before it compares identities).
 */
async function checkResume(
  ctx: RunContext<unknown>,
  plan: RunPlan,
  inputPath: string,
  { problems, notes }: Findings,
): Promise<void> {
  const problemsBefore = problems.length;
  try {
    for (const damaged of await inspectPublished(plan.runDir))
      (damaged.remedy === 'refuse' ? problems : notes).push(damageLine(plan.runDir, damaged));
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    problems.push(err.message);
  }
  if (problems.length > problemsBefore) return;
  // Digesting the input costs a read of it, so only when there is a recorded run to compare with.
  if ((await readRunManifest(plan.runDir)) === undefined) return;
  const manifest = currentRunManifest(ctx.config, {
    'collect.input_jsonl': await fileDigest(inputPath, ctx.config.collect.input_jsonl),
  });
  try {
    await checkRunManifest(plan.runDir, manifest, `run ${plan.runId}`);
  } catch (err) {
    if (!(err instanceof ApplicationFailure)) throw err;
    problems.push(err.message);
  }
}
