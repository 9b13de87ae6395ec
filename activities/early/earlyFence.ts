import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { writeFileDurably } from '../../gym/durable';
import { Fence, SUPERSEDED } from '../chunk/fence';

// The one fence of early profiling's writers (docs/fencing.md): the segments' builds, the filing
// passes and the removals. It lives in the run's local-profile shards directory, which outlives
// all of them, so an attempt that wakes after the removal still finds the removal's newer claim
// there and writes nothing.
//
// A claim alone cannot stop a writer whose claim comes after the removal's: early profiling's
// activities and the removal run in different workflow runs, where the later claim is the newer one,
// so an attempt paused before it claimed (a SIGSTOPped worker) would wake as the owner. The removal
// therefore also closes the fence for good, and a writer looks for that before and after its claim.

/** The marker the removal leaves: early profiling of this run directory is over. */
const CLOSED = 'closed';

/**
 * Claims a token newer than every earlier early-profiling writer's, and removes their claims; refuses,
 * creating nothing, once the fence is closed. Looked at again after the claim: a removal that closed
 * it meanwhile and claimed before this writer did is older by claim, but the closing came first.
 */
export async function claimEarlyFence(outPrefix: string, what: string): Promise<Fence> {
  await refuseWhenClosed(outPrefix, what);
  const fence = await Fence.claim(earlyFenceDir(outPrefix), what);
  await refuseWhenClosed(outPrefix, what).catch(async (err: unknown) => {
    await fence.withdraw();
    throw err;
  });
  await fence.removeOlder();
  return fence;
}

async function refuseWhenClosed(outPrefix: string, what: string): Promise<void> {
  if (await exists(path.join(earlyFenceDir(outPrefix), CLOSED)))
    throw ApplicationFailure.create({
      type: SUPERSEDED,
      nonRetryable: true,
      message: `${what}: superseded by the removal of early profiling's files, which closed its fence; this attempt stops without writing`,
    });
}

/**
 * Before early profiling's files are removed: a claim newer than every writer's, so one still running
 * somewhere stops before it writes. Where no writer ever claimed, there is none to stop, and nothing
 * is created.
 */
export async function fenceOutEarly(outPrefix: string): Promise<void> {
  if (!(await exists(earlyFenceDir(outPrefix)))) return;
  // Closed before the claim, so a writer that claims after the removal's claim finds it closed.
  await writeFileDurably(path.join(earlyFenceDir(outPrefix), CLOSED), '');
  const fence = await Fence.claim(earlyFenceDir(outPrefix), `early profiling of ${outPrefix}`);
  await fence.removeOlder();
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

function earlyFenceDir(outPrefix: string): string {
  return `${outPrefix}_shards/early`;
}
