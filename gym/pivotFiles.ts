import { DatasetMetricsAccumulator, datasetMetricsHeader, formatDatasetMetricsFile } from './datasetMetrics';
import { buildPivotGymConfig, renderPivotGymConfigYaml, validationDatasetName } from './gymConfig';
import { jsonLine, readJsonl } from './jsonl';
import { writeFileDurably } from './durable';
import { StagedJsonlFile } from './stagedJsonl';
import { withKindedProvenance } from './convert/candidates';
import { PublishInputError } from './errors';
import type { ParsedPublishOptions } from './publishOptions';
import type { PivotSelection } from './selection';
import type { CandidateSummary } from './selectionMetrics';
import type { Split } from './validationSplit';

// The dataset's files: the kept candidates as NeMo Gym pivot rows, one JSONL file per side of the
// split, then the Gym config that serves them and each file's `ng_prepare_data` metrics.

/** One published JSONL file, with the metrics of what was written to it. */
export class PivotFile extends StagedJsonlFile {
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
export async function writePivotRows(
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

/** The Gym config listing each side's file, and each file's `ng_prepare_data` metrics beside it. */
export async function writeGymFiles(
  opts: ParsedPublishOptions,
  files: ReadonlyMap<Split, PivotFile>,
  paths: { gymConfigPath: string; datasetMetricsPath: string; validationMetricsPath: string },
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
    datasets.push([
      'validation',
      validationDatasetName(opts.datasetName),
      validationJsonlFpath,
      paths.validationMetricsPath,
    ]);
  }
  for (const [type, name, fpath, metricsPath] of datasets) {
    const header = datasetMetricsHeader({ name, type, jsonl_fpath: fpath, license: 'TBD' });
    await writeFileDurably(metricsPath, formatDatasetMetricsFile(header, files.get(type)!.metrics.result()));
  }
}

/** `data/x.jsonl` → `data/x_validation.jsonl`: the validation file beside the train one. */
function validationFpath(trainFpath: string): string {
  return trainFpath.endsWith('.jsonl')
    ? `${trainFpath.slice(0, -'.jsonl'.length)}_validation.jsonl`
    : `${trainFpath}_validation`;
}
