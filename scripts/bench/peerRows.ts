import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { PivotMiningResult } from '../../contracts/payloads';

// The peer bench's rows (scripts/bench/peer.ts): a published pivots.jsonl and the Gym config YAML
// beside it, copied into the bench's work dir, so both sides read the same files whatever happens
// to the source meanwhile.

/** Copies a published pivots.jsonl and its Gym config to `<dir>/rows`; returns the copy of the pivots. */
function copyRows(pivotsPath: string, gymConfigPath: string, dir: string): string {
  const rowsDir = path.join(dir, 'rows');
  mkdirSync(rowsDir, { recursive: true });
  copyFileSync(pivotsPath, path.join(rowsDir, 'pivots.jsonl'));
  copyFileSync(gymConfigPath, path.join(rowsDir, path.basename(gymConfigPath)));
  return path.join(rowsDir, 'pivots.jsonl');
}

/** The one Gym config YAML beside a published pivots.jsonl. */
export function gymConfigBeside(pivotsPath: string): string {
  const yamls = readdirSync(path.dirname(pivotsPath)).filter((f) => f.endsWith('.yaml'));
  if (yamls.length !== 1)
    throw new Error(
      `expected one Gym config YAML beside ${pivotsPath}, found ${yamls.length ? yamls.join(', ') : 'none'}`,
    );
  return path.join(path.dirname(pivotsPath), yamls[0]!);
}

/** A published dataset given with --pivots, copied. */
export const givenPivots = (pivotsPath: string, dir: string): string =>
  copyRows(pivotsPath, gymConfigBeside(pivotsPath), dir);

/** The demo's published pivots and Gym config, from a demo pipeline run on our worker, copied. */
export async function demoPivots(client: Client, taskQueue: string, dir: string): Promise<string> {
  const result = (await client.workflow.execute('pivotMiningWorkflow', {
    taskQueue,
    workflowId: `peer-${process.pid}-demo`,
    args: [{ config_path: 'configs/demo.yaml', run_id: 'peer-demo' }],
  })) as PivotMiningResult;
  return copyRows(result.pivotsPath, result.gymConfigPath, dir);
}
