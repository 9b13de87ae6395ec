import { copyFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import YAML from 'yaml';
import { submitPolicyCheckpoint } from '../../client';
import type { NightlyMiningResult } from '../../contracts/poolPayloads';
import { nightlyMiningWorkflow, pivotCurriculumWorkflow } from '../../workflows';
import type { ArtifactComparison } from './compare';

// The pool half of a power-loss run: a nightly run mines the pipeline's rollouts into a new pool
// version, then one curriculum round re-profiles that version under a policy checkpoint. Each host
// runs both after its pipeline run. What they publish (pool and curriculum versions, `latest`, the
// sources manifest, the retirements) must be what the undisturbed host published, byte for byte,
// once the wall-clock version name and the host's own paths are set aside.

export const POOL_CONFIG = 'pool.yaml';
const SOURCE = 'incoming/rollouts.jsonl';
export const POOL_DIR = 'pools/chaos';
const CHECKPOINT = { model: 'sim-policy@step-3', training_step: 3 };

/** The pool config (the pipeline's, plus pool.sources) and its one source: the undisturbed run's rollouts. */
export function writePoolInputs(baseDir: string, pipeline: object, rolloutsPath: string): void {
  mkdirSync(path.join(baseDir, path.dirname(SOURCE)), { recursive: true });
  copyFileSync(rolloutsPath, path.join(baseDir, SOURCE));
  writeFileSync(path.join(baseDir, POOL_CONFIG), YAML.stringify({ ...pipeline, pool: { sources: [SOURCE] } }));
}

export interface PoolPhaseResult {
  /** The worker base directory: the curriculum records its initial pool's path relative to it. */
  baseDir: string;
  artifactsRoot: string;
  nightlyVersion: string;
  curriculumDir: string;
}

/** A nightly run, then one curriculum round on the version it published; the curriculum is then cancelled. */
export async function runPoolPhase(
  client: Client,
  name: string,
  dirs: { baseDir: string; artifactsRoot: string },
): Promise<PoolPhaseResult> {
  const taskQueue = `chaos-${name}`;
  const nightly = (await client.workflow.execute(nightlyMiningWorkflow, {
    taskQueue,
    workflowId: `power-loss-${name}-nightly`,
    args: [{ config_path: POOL_CONFIG }],
  })) as NightlyMiningResult;
  if (nightly.status !== 'published' || nightly.versionId === null) throw new Error(`nightly run: ${nightly.message}`);
  const curriculumId = `power-loss-${name}-curriculum`;
  const curriculum = await client.workflow.start(pivotCurriculumWorkflow, {
    taskQueue,
    workflowId: curriculumId,
    args: [{ config_path: POOL_CONFIG }],
  });
  const round = await submitPolicyCheckpoint(client, curriculumId, CHECKPOINT);
  await curriculum.cancel();
  return {
    ...dirs,
    nightlyVersion: nightly.versionId,
    curriculumDir: path.dirname(path.dirname(path.dirname(round.pivotsPath))),
  };
}

/**
 * The published files of a pool as `relative path -> normalized content`: versions, `latest`
 * (its target), the manifest and the curriculum's files, not the runs/ directories that produced
 * them (shards and attempts differ by design, as in a pipeline run).
 */
function publishedPool(result: PoolPhaseResult): Map<string, string> {
  const poolDir = path.join(result.artifactsRoot, POOL_DIR);
  const curriculumName = path.basename(result.curriculumDir);
  const normalize = (text: string) =>
    text
      .split(result.artifactsRoot)
      .join('<root>')
      .split(`${path.relative(result.baseDir, result.artifactsRoot)}/`)
      .join('<root>/')
      .split(result.nightlyVersion)
      .join('<version>')
      .split(curriculumName)
      .join('<curriculum>');
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    const abs = path.join(poolDir, rel);
    const stat = lstatSync(abs, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isSymbolicLink()) files.set(normalize(rel), `-> ${normalize(readlinkSync(abs))}`);
    else if (stat.isDirectory()) {
      for (const entry of readdirSync(abs).sort()) if (entry !== 'runs') walk(path.join(rel, entry));
    } else files.set(normalize(rel), normalize(readFileSync(abs, 'utf8')));
  };
  walk('');
  return files;
}

export function comparePools(reference: PoolPhaseResult, candidate: PoolPhaseResult): ArtifactComparison {
  const ref = publishedPool(reference);
  const cand = publishedPool(candidate);
  const differing: string[] = [];
  for (const [rel, text] of ref) {
    if (!cand.has(rel)) differing.push(`${POOL_DIR}/${rel} (missing)`);
    else if (cand.get(rel) !== text) differing.push(`${POOL_DIR}/${rel}`);
    cand.delete(rel);
  }
  differing.push(...[...cand.keys()].map((rel) => `${POOL_DIR}/${rel} (extra)`));
  return { identical: differing.length === 0, filesCompared: ref.size, differing };
}
