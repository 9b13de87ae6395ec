import { stat } from 'node:fs/promises';
import { Fence } from '../chunk/fence';

// The one fence of early profiling's writers (docs/fencing.md): the segments' builds, the filing
// passes and the removals. It lives in the run's local-profile shards directory, which outlives
// all of them, so an attempt that wakes after the removal still finds the removal's newer claim
// there and writes nothing.

/** Claims a token newer than every earlier early-profiling writer's, and removes their claims. */
export async function claimEarlyFence(outPrefix: string, what: string): Promise<Fence> {
  const fence = await Fence.claim(earlyFenceDir(outPrefix), what);
  await fence.removeOlder();
  return fence;
}

/**
 * Before early profiling's files are removed: a claim newer than every writer's, so one still running
 * somewhere stops before it writes. Where no writer ever claimed, there is none to stop, and nothing
 * is created.
 */
export async function fenceOutEarly(outPrefix: string): Promise<void> {
  const claimed = await stat(earlyFenceDir(outPrefix)).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
  if (claimed) await claimEarlyFence(outPrefix, `early profiling of ${outPrefix}`);
}

function earlyFenceDir(outPrefix: string): string {
  return `${outPrefix}_shards/early`;
}
