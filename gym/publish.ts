import path from 'node:path';
import { z } from 'zod';
import { limitActionMix, maxShareSchema } from './actionMix';
import { DatasetMetricsAccumulator, datasetMetricsHeader, formatDatasetMetricsFile } from './datasetMetrics';
import {
  buildPivotGymConfig,
  pivotGymConfigFileName,
  renderPivotGymConfigYaml,
  validationDatasetName,
} from './gymConfig';
import { jsonLine, readJsonl } from './jsonl';
import { mkdirDurably, syncDir, writeFileDurably } from './durable';
import { StagedJsonlFile } from './stagedJsonl';
import { withKindedProvenance } from './convert/candidates';
import {
  readCandidateSummaries,
  readDuplicateLinks,
  readLocalProfile,
  readSkipReasons,
  readUpstreamCounts,
} from './publishInputs';
import { PublishInputError } from './errors';
import { renderReport } from './report';
import type { RolloutAccounting } from './rolloutAccounting';
import { stageHealthSchema } from './health/stageHealth';
import { selectPivots, type PivotSelection } from './selection';
import { computeSelectionMetrics, type CandidateSummary, type PublishCounts } from './selectionMetrics';
import { SPLITS, ValidationSplit, type Split } from './validationSplit';

export { PublishInputError } from './errors';

// The last stage: keep the mixed-reward candidates the rules let through, write them as a NeMo Gym
// pivot dataset (train, and validation when asked for) with the config that serves it, and explain
// the selection (metrics + HTML report). Candidates are streamed
// twice (summaries, then kept rows) so memory grows with the number of candidates, not their size.
// Every file is a pure function of the inputs: no timestamps, sorted breakdowns, fixed key order.

export const PIVOTS_FILE = 'pivots.jsonl';
export const VALIDATION_PIVOTS_FILE = 'pivots_validation.jsonl';
export const SELECTION_METRICS_FILE = 'selection_metrics.json';
/** Named as `ng_prepare_data` names a dataset's metrics: `<jsonl stem>_metrics.json`. */
export const PIVOTS_METRICS_FILE = 'pivots_metrics.json';
export const VALIDATION_PIVOTS_METRICS_FILE = 'pivots_validation_metrics.json';
export const REPORT_FILE = 'report.html';

const nameSchema = z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be a plain name (letters, digits, . _ -)');

export const publishOptionsSchema = z.strictObject({
  candidatesPath: z.string().min(1),
  localProfilePath: z.string().min(1),
  skippedPath: z.string().min(1).optional(),
  convertMetricsPath: z.string().min(1).optional(),
  outDir: z.string().min(1),
  agentName: nameSchema,
  resourcesServerName: nameSchema.optional(),
  modelServerName: z.string().min(1).optional(),
  comparatorConfig: z.record(z.string(), z.unknown()).optional(),
  maxPivots: z.number().int().nonnegative().optional(),
  allowPartial: z.boolean().optional(),
  maxPassRate: z.number().gt(0).lte(1).optional(),
  maxShare: maxShareSchema.optional(),
  /** Expected share of source trajectories published as validation; 0 or absent: train only. */
  validationFraction: z.number().min(0).max(0.5).optional(),
  validationSeed: z.number().int().default(0),
  datasetName: nameSchema.default('pivots'),
  /** Written into the Gym config; defaults to the absolute path of pivots.jsonl so it loads from any cwd. */
  jsonlFpath: z.string().min(1).optional(),
  simulatorLabel: z.string().min(1).optional(),
  /** The real model that was profiled, named in the report (ignored when simulatorLabel is set). */
  policy: z
    .strictObject({
      model: z.string().min(1),
      api: z.enum(['responses', 'chat_completions']),
      sourceRolloutsSimulated: z.boolean(),
    })
    .optional(),
  /** Stage counts known to the caller (`tasks`, `rollouts`, `positive_trajectories`, ...). */
  funnel: z.record(z.string(), z.number()).optional(),
  /** Where each rollout stage's expected rollouts went (gym/rolloutAccounting.ts), shown in the report. */
  accounting: z
    .record(
      z.string(),
      z.custom<RolloutAccounting>((v) => typeof v === 'object' && v !== null),
    )
    .optional(),
  /** What NeMo Gym 0.7.0's health checks found in each rollout stage, shown in the report. */
  health: z.record(z.string(), stageHealthSchema).optional(),
  /** The run's engine timeline drawing, relative to the dataset directory; the report links it. */
  engineTimelineSrc: z.string().min(1).optional(),
});
export type PublishOptions = z.input<typeof publishOptionsSchema>;

export interface PublishResult {
  pivotsPath: string;
  /** Set when a validation split was asked for. */
  validationPivotsPath?: string;
  gymConfigPath: string;
  selectionMetricsPath: string;
  datasetMetricsPath: string;
  reportPath: string;
  /** `published_partial`: published pivots with fewer local samples than asked for (allow_partial only). */
  counts: PublishCounts & { published_partial: number };
  /** Published pivots per side of the split (train only without one). */
  publishedBySplit: Partial<Record<Split, number>>;
}

/** One published JSONL file, with the metrics of what was written to it. */
class PivotFile extends StagedJsonlFile {
  readonly metrics = new DatasetMetricsAccumulator();

  async write(pivot: Record<string, unknown> & { provenance: Record<string, unknown> }): Promise<void> {
    this.metrics.add(pivot);
    await this.writeLine(jsonLine(withKindedProvenance(pivot)));
  }
}

/** A kept candidate row as a NeMo Gym pivot row. */
function pivotRow(row: Record<string, unknown>, selection: PivotSelection<CandidateSummary>, agentName: string) {
  const profile = selection.profile!;
  // Kept with fewer samples than asked for only under allow_partial, and then marked as such,
  // so a trainer can tell its pass rate rests on fewer samples.
  const partial =
    profile.missing_num_samples > 0
      ? { local_partial: true, local_expected_num_samples: profile.expected_num_samples }
      : {};
  return {
    ...row,
    agent_ref: { type: 'responses_api_agents', name: agentName },
    provenance: {
      ...(row.provenance as Record<string, unknown>),
      local_pass_rate: profile.pass_rate,
      local_num_samples: profile.num_samples,
      ...partial,
    },
  };
}

/**
 * Second pass over the candidates: the kept rows as NeMo Gym pivot rows, each into the file of its
 * side of the split. Each keeps its fields untouched except `agent_ref` (routed to the generated
 * config's agent) and `provenance`, which gains the local pass rate and sample count that
 * justified keeping it. Returns how many were published with fewer samples than asked for.
 */
async function writePivotRows(
  candidatesPath: string,
  files: ReadonlyMap<Split, PivotFile>,
  selections: readonly PivotSelection<CandidateSummary>[],
  agentName: string,
): Promise<number> {
  let partialCount = 0;
  try {
    let index = 0;
    for await (const { line, value } of readJsonl(candidatesPath)) {
      const selection = selections[index++];
      if (selection === undefined || selection.candidate.line !== line) {
        throw new PublishInputError(candidatesPath, line, 'file changed while it was being published');
      }
      if (selection.outcome !== 'mixed') continue;
      if (selection.profile!.missing_num_samples > 0) partialCount += 1;
      await files
        .get(selection.candidate.split ?? 'train')!
        .write(pivotRow(value as Record<string, unknown>, selection, agentName));
    }
    if (index !== selections.length) {
      throw new PublishInputError(candidatesPath, null, 'file changed while it was being published');
    }
    for (const file of files.values()) await file.commit();
  } catch (err) {
    for (const file of files.values()) await file.abort();
    throw err;
  }
  return partialCount;
}

/**
 * Puts every candidate on a side of the split by its source trajectory, joining the trajectories
 * convert found a kept pivot in again (the skip audit's duplicates) to the kept pivot's.
 */
async function assignSplits(
  summaries: readonly CandidateSummary[],
  opts: { candidatesPath: string; skippedPath?: string; fraction: number; seed: number },
): Promise<void> {
  const split = new ValidationSplit({ fraction: opts.fraction, seed: opts.seed });
  const byUuid = new Map(summaries.map((s) => [s.uuid, s]));
  for (const link of await readDuplicateLinks(opts.skippedPath)) {
    const kept = byUuid.get(link.duplicateOf)?.trajectory;
    if (kept !== undefined) split.join(kept, link.trajectory);
  }
  for (const summary of summaries) {
    if (summary.trajectory === undefined) {
      throw new PublishInputError(
        opts.candidatesPath,
        summary.line,
        'provenance needs source_file, task_index and rollout_index to split by source trajectory',
      );
    }
    summary.split = split.splitOf(summary.trajectory);
  }
}

/** `data/x.jsonl` → `data/x_validation.jsonl`: the validation file beside the train one. */
function validationFpath(trainFpath: string): string {
  return trainFpath.endsWith('.jsonl')
    ? `${trainFpath.slice(0, -'.jsonl'.length)}_validation.jsonl`
    : `${trainFpath}_validation`;
}

type ParsedPublishOptions = z.output<typeof publishOptionsSchema>;

/**
 * Every candidate's outcome, rule by rule: the mixed test, the ceiling and the budget, then the
 * action mix on each side of the split (so it holds on both sides and on the whole dataset).
 */
async function selectCandidates(opts: ParsedPublishOptions, splits: readonly Split[]) {
  const summaries = await readCandidateSummaries(opts.candidatesPath);
  if (splits.includes('validation')) {
    await assignSplits(summaries, {
      candidatesPath: opts.candidatesPath,
      skippedPath: opts.skippedPath,
      fraction: opts.validationFraction!,
      seed: opts.validationSeed,
    });
  }
  const profiles = await readLocalProfile(opts.localProfilePath, summaries.length);
  const selections = selectPivots(summaries, profiles, {
    max_pivots: opts.maxPivots,
    allow_partial: opts.allowPartial,
    max_pass_rate: opts.maxPassRate,
  });
  if (opts.maxShare !== undefined) {
    for (const split of splits)
      limitActionMix(
        selections.filter((s) => (s.candidate.split ?? 'train') === split),
        opts.maxShare,
      );
  }
  return selections;
}

/** The Gym config listing each side's file, and each file's `ng_prepare_data` metrics beside it. */
async function writeGymFiles(
  opts: ParsedPublishOptions,
  files: ReadonlyMap<Split, PivotFile>,
  paths: { gymConfigPath: string; datasetMetricsPath: string },
): Promise<void> {
  const jsonlFpath = opts.jsonlFpath ?? files.get('train')!.path;
  const validationJsonlFpath = files.has('validation') ? validationFpath(jsonlFpath) : undefined;
  const gymConfig = buildPivotGymConfig({
    agentName: opts.agentName,
    resourcesServerName: opts.resourcesServerName,
    modelServerName: opts.modelServerName,
    comparatorConfig: opts.comparatorConfig,
    datasetName: opts.datasetName,
    jsonlFpath,
    validationJsonlFpath,
  });
  await writeFileDurably(paths.gymConfigPath, renderPivotGymConfigYaml(gymConfig));

  const datasets: [Split, string, string, string][] = [
    ['train', opts.datasetName, jsonlFpath, paths.datasetMetricsPath],
  ];
  if (validationJsonlFpath !== undefined) {
    const metricsPath = path.join(path.dirname(paths.datasetMetricsPath), VALIDATION_PIVOTS_METRICS_FILE);
    datasets.push(['validation', validationDatasetName(opts.datasetName), validationJsonlFpath, metricsPath]);
  }
  for (const [type, name, fpath, metricsPath] of datasets) {
    const header = datasetMetricsHeader({ name, type, jsonl_fpath: fpath, license: 'TBD' });
    await writeFileDurably(metricsPath, formatDatasetMetricsFile(header, files.get(type)!.metrics.result()));
  }
}

export async function publishPivotDataset(input: PublishOptions): Promise<PublishResult> {
  const opts = publishOptionsSchema.parse(input);
  const outDir = path.resolve(opts.outDir);
  await mkdirDurably(outDir);
  await syncDir(path.dirname(outDir));
  const splitting = (opts.validationFraction ?? 0) > 0;
  const pivotsPath = path.join(outDir, PIVOTS_FILE);
  const validationPivotsPath = path.join(outDir, VALIDATION_PIVOTS_FILE);
  const gymConfigPath = path.join(outDir, pivotGymConfigFileName(opts.datasetName));
  const selectionMetricsPath = path.join(outDir, SELECTION_METRICS_FILE);
  const datasetMetricsPath = path.join(outDir, PIVOTS_METRICS_FILE);
  const reportPath = path.join(outDir, REPORT_FILE);

  const selections = await selectCandidates(opts, splitting ? SPLITS : ['train']);
  const files = new Map<Split, PivotFile>([['train', new PivotFile(pivotsPath)]]);
  if (splitting) files.set('validation', new PivotFile(validationPivotsPath));
  const partialCount = await writePivotRows(opts.candidatesPath, files, selections, opts.agentName);
  await writeGymFiles(opts, files, { gymConfigPath, datasetMetricsPath });

  const selectionMetrics = computeSelectionMetrics({
    selections,
    skipReasons: await readSkipReasons(opts.skippedPath),
    upstream: await readUpstreamCounts(opts.convertMetricsPath, opts.funnel ?? {}),
    options: {
      max_pivots: opts.maxPivots,
      allow_partial: opts.allowPartial,
      max_pass_rate: opts.maxPassRate,
      max_share: opts.maxShare,
      validation_fraction: opts.validationFraction,
      validation_seed: opts.validationSeed,
    },
  });
  const selectionFile = {
    ...selectionMetrics,
    pipeline_counts: opts.funnel ?? null,
    simulator_label: opts.simulatorLabel ?? null,
  };
  await writeFileDurably(selectionMetricsPath, `${JSON.stringify(selectionFile, null, 2)}\n`);

  await writeFileDurably(
    reportPath,
    renderReport({
      datasetName: opts.datasetName,
      agentName: opts.agentName,
      simulatorLabel: opts.simulatorLabel ?? null,
      policy: opts.policy ?? null,
      selection: selectionMetrics,
      datasetMetrics: files.get('train')!.metrics.result(),
      accounting: opts.accounting ?? null,
      health: opts.health ?? null,
      engineTimelineSrc: opts.engineTimelineSrc ?? null,
      files: {
        pivots: PIVOTS_FILE,
        ...(splitting ? { validationPivots: VALIDATION_PIVOTS_FILE } : {}),
        gymConfig: path.basename(gymConfigPath),
        selectionMetrics: SELECTION_METRICS_FILE,
        datasetMetrics: PIVOTS_METRICS_FILE,
      },
    }),
  );

  return {
    pivotsPath,
    ...(splitting ? { validationPivotsPath } : {}),
    gymConfigPath,
    selectionMetricsPath,
    datasetMetricsPath,
    reportPath,
    counts: { ...selectionMetrics.counts, published_partial: partialCount },
    publishedBySplit: Object.fromEntries(
      Object.entries(selectionMetrics.by_split).map(([split, c]) => [split, c!.published]),
    ),
  };
}
