import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { z } from 'zod';
import { DatasetMetricsAccumulator, datasetMetricsHeader, formatDatasetMetricsFile } from './datasetMetrics';
import { buildPivotGymConfig, pivotGymConfigFileName, renderPivotGymConfigYaml } from './gymConfig';
import { jsonLine, readJsonl } from './jsonl';
import { withKindedProvenance } from './convert/candidates';
import { readCandidateSummaries, readLocalProfile, readSkipReasons, readUpstreamCounts } from './publishInputs';
import { PublishInputError } from './errors';
import { renderReport } from './report';
import type { RolloutAccounting } from './rolloutAccounting';
import { selectPivots, type PivotSelection } from './selection';
import { computeSelectionMetrics, type CandidateSummary, type PublishCounts } from './selectionMetrics';

export { PublishInputError } from './errors';

// The last stage: keep the mixed-reward candidates, write them as a NeMo Gym pivot dataset with the
// config that serves it, and explain the selection (metrics + HTML report). Candidates are streamed
// twice (summaries, then kept rows) so memory grows with the number of candidates, not their size.
// Every file is a pure function of the inputs: no timestamps, sorted breakdowns, fixed key order.

export const PIVOTS_FILE = 'pivots.jsonl';
export const SELECTION_METRICS_FILE = 'selection_metrics.json';
export const PIVOTS_METRICS_FILE = 'pivots_metrics.json';
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
});
export type PublishOptions = z.input<typeof publishOptionsSchema>;

export interface PublishResult {
  pivotsPath: string;
  gymConfigPath: string;
  selectionMetricsPath: string;
  datasetMetricsPath: string;
  reportPath: string;
  /** `published_partial`: published pivots with fewer local samples than asked for (allow_partial only). */
  counts: PublishCounts & { published_partial: number };
}

/** Writes beside the target then renames, so a crash never leaves a half-written artifact in place. */
async function writeFileAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, file);
}

/**
 * Second pass over the candidates: the kept rows as NeMo Gym pivot rows. Each keeps its fields
 * untouched except `agent_ref` (routed to the generated config's agent) and `provenance`, which
 * gains the local pass rate and sample count that justified keeping it.
 */
async function writePivotRows(
  candidatesPath: string,
  pivotsPath: string,
  selections: readonly PivotSelection<CandidateSummary>[],
  agentName: string,
  metrics: DatasetMetricsAccumulator,
  partialCount: { n: number },
): Promise<void> {
  const agentRef = { type: 'responses_api_agents', name: agentName };
  const tmp = `${pivotsPath}.tmp`;
  const out = createWriteStream(tmp);
  try {
    let index = 0;
    for await (const { line, value } of readJsonl(candidatesPath)) {
      const selection = selections[index++];
      if (selection === undefined || selection.candidate.line !== line) {
        throw new PublishInputError(candidatesPath, line, 'file changed while it was being published');
      }
      if (selection.outcome !== 'mixed') continue;
      const row = value as Record<string, unknown>;
      const profile = selection.profile!;
      // Kept with fewer samples than asked for only under allow_partial, and then marked as such,
      // so a trainer can tell its pass rate rests on fewer samples.
      const partial =
        profile.missing_num_samples > 0
          ? { local_partial: true, local_expected_num_samples: profile.expected_num_samples }
          : {};
      if (profile.missing_num_samples > 0) partialCount.n += 1;
      const pivot = {
        ...row,
        agent_ref: agentRef,
        provenance: {
          ...(row.provenance as Record<string, unknown>),
          local_pass_rate: profile.pass_rate,
          local_num_samples: profile.num_samples,
          ...partial,
        },
      };
      metrics.add(pivot);
      if (!out.write(jsonLine(withKindedProvenance(pivot)))) await once(out, 'drain');
    }
    if (index !== selections.length) {
      throw new PublishInputError(candidatesPath, null, 'file changed while it was being published');
    }
    out.end();
    await finished(out);
  } catch (err) {
    out.destroy();
    await rm(tmp, { force: true });
    throw err;
  }
  await rename(tmp, pivotsPath);
}

export async function publishPivotDataset(input: PublishOptions): Promise<PublishResult> {
  const opts = publishOptionsSchema.parse(input);
  const outDir = path.resolve(opts.outDir);
  await mkdir(outDir, { recursive: true });
  const pivotsPath = path.join(outDir, PIVOTS_FILE);
  const gymConfigPath = path.join(outDir, pivotGymConfigFileName(opts.datasetName));
  const selectionMetricsPath = path.join(outDir, SELECTION_METRICS_FILE);
  const datasetMetricsPath = path.join(outDir, PIVOTS_METRICS_FILE);
  const reportPath = path.join(outDir, REPORT_FILE);

  const summaries = await readCandidateSummaries(opts.candidatesPath);
  const profiles = await readLocalProfile(opts.localProfilePath, summaries.length);
  const selections = selectPivots(summaries, profiles, {
    max_pivots: opts.maxPivots,
    allow_partial: opts.allowPartial,
  });

  const metrics = new DatasetMetricsAccumulator();
  const partialCount = { n: 0 };
  await writePivotRows(opts.candidatesPath, pivotsPath, selections, opts.agentName, metrics, partialCount);

  const jsonlFpath = opts.jsonlFpath ?? pivotsPath;
  const gymConfig = buildPivotGymConfig({
    agentName: opts.agentName,
    resourcesServerName: opts.resourcesServerName,
    modelServerName: opts.modelServerName,
    comparatorConfig: opts.comparatorConfig,
    datasetName: opts.datasetName,
    jsonlFpath,
  });
  await writeFileAtomic(gymConfigPath, renderPivotGymConfigYaml(gymConfig));

  const datasetMetrics = metrics.result();
  const header = datasetMetricsHeader({
    name: opts.datasetName,
    type: 'train',
    jsonl_fpath: jsonlFpath,
    license: 'TBD',
  });
  await writeFileAtomic(datasetMetricsPath, formatDatasetMetricsFile(header, datasetMetrics));

  const selectionMetrics = computeSelectionMetrics({
    selections,
    skipReasons: await readSkipReasons(opts.skippedPath),
    upstream: await readUpstreamCounts(opts.convertMetricsPath, opts.funnel ?? {}),
    options: { max_pivots: opts.maxPivots, allow_partial: opts.allowPartial },
  });
  const selectionFile = {
    ...selectionMetrics,
    pipeline_counts: opts.funnel ?? null,
    simulator_label: opts.simulatorLabel ?? null,
  };
  await writeFileAtomic(selectionMetricsPath, `${JSON.stringify(selectionFile, null, 2)}\n`);

  await writeFileAtomic(
    reportPath,
    renderReport({
      datasetName: opts.datasetName,
      agentName: opts.agentName,
      simulatorLabel: opts.simulatorLabel ?? null,
      policy: opts.policy ?? null,
      selection: selectionMetrics,
      datasetMetrics,
      accounting: opts.accounting ?? null,
      files: {
        pivots: PIVOTS_FILE,
        gymConfig: path.basename(gymConfigPath),
        selectionMetrics: SELECTION_METRICS_FILE,
        datasetMetrics: PIVOTS_METRICS_FILE,
      },
    }),
  );

  return {
    pivotsPath,
    gymConfigPath,
    selectionMetricsPath,
    datasetMetricsPath,
    reportPath,
    counts: { ...selectionMetrics.counts, published_partial: partialCount.n },
  };
}
