import path from 'node:path';
import { pivotGymConfigFileName } from './gymConfig';
import { mkdirDurably, syncDir, writeFileDurably } from './durable';
import { readSkipReasons, readUpstreamCounts } from './publishInputs';
import { PivotFile, writeGymFiles, writePivotRows } from './pivotFiles';
import {
  publishOptionsSchema,
  type ParsedPublishOptions,
  type PublishOptions,
  type PublishResult,
} from './publishOptions';
import { selectCandidates } from './publishSelection';
import { renderReport } from './report';
import type { PivotSelection } from './selection';
import { computeSelectionMetrics, type CandidateSummary, type SelectionMetrics } from './selectionMetrics';
import { SPLITS, type Split } from './validationSplit';

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
  await writeGymFiles(opts, files, {
    gymConfigPath,
    datasetMetricsPath,
    validationMetricsPath: path.join(outDir, VALIDATION_PIVOTS_METRICS_FILE),
  });
  const selectionMetrics = await writeSelectionMetrics(opts, selections, selectionMetricsPath);
  await writeReport(opts, selectionMetrics, files.get('train')!, { reportPath, gymConfigPath, splitting });

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

/** The selection explained in numbers: every outcome, rule and breakdown, with the options used. */
async function writeSelectionMetrics(
  opts: ParsedPublishOptions,
  selections: readonly PivotSelection<CandidateSummary>[],
  selectionMetricsPath: string,
): Promise<SelectionMetrics> {
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
  return selectionMetrics;
}

/** The HTML report: the selection, the train file's metrics and the run's accounting and health. */
async function writeReport(
  opts: ParsedPublishOptions,
  selection: SelectionMetrics,
  train: PivotFile,
  paths: { reportPath: string; gymConfigPath: string; splitting: boolean },
): Promise<void> {
  await writeFileDurably(
    paths.reportPath,
    renderReport({
      datasetName: opts.datasetName,
      agentName: opts.agentName,
      simulatorLabel: opts.simulatorLabel ?? null,
      policy: opts.policy ?? null,
      selection,
      datasetMetrics: train.metrics.result(),
      accounting: opts.accounting ?? null,
      health: opts.health ?? null,
      engineTimelineSrc: opts.engineTimelineSrc ?? null,
      files: {
        pivots: PIVOTS_FILE,
        ...(paths.splitting ? { validationPivots: VALIDATION_PIVOTS_FILE } : {}),
        gymConfig: path.basename(paths.gymConfigPath),
        selectionMetrics: SELECTION_METRICS_FILE,
        datasetMetrics: PIVOTS_METRICS_FILE,
      },
    }),
  );
}
