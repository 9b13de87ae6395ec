import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../../bin/built';
import { perfLines, startPerf } from './peerPerf';
import { profileLines, summarizeProfileDir } from './peerProfile';
import { roundLine } from './peerReport';
import { runB, threadsPerRollout, type SideB } from './peerSides';

// The peer bench's uncounted rounds on the profiled worker (--worker-cpu-profile): where its CPU
// went, by V8's sampler (scripts/diagnostics/cpuProfile.cjs, peerProfile.ts) and, when perf is installed, by Linux's
// perf (peerPerf.ts). The samplers' cost is in their rounds, so none of them is in the figures.

const log = (line: string) => console.log(line);

/** The worker with the sampler, on its own queue: one warm-up round, then one profiled round. */
export async function runProfiledRounds(
  sideP: SideB,
  dir: string,
  cpuProfileDir: string,
  withPerf: boolean,
): Promise<void> {
  const warm = await runB(sideP, path.join(dir, 'runs', 'profile-warmup'), 0, 'profile-warmup');
  log(`profiled worker, warm-up: ${roundLine(warm.round)}`);
  writeFileSync(path.join(cpuProfileDir, 'start'), '');
  await sleep(200);
  const p = await runB(sideP, path.join(dir, 'runs', 'profiled'), 0, 'profiled');
  writeFileSync(path.join(cpuProfileDir, 'stop'), '');
  await sleep(2000);
  log(`profiled round (the sampler's cost included, NOT counted): ${roundLine(p.round)}`);
  log(`  its worker CPU by thread (µs/rollout): ${threadsPerRollout(p.threads, p.round.rollouts)}`);
  log(
    "V8's sampler, the profiled round's worker threads (samples on wall time: on a busy host they include waits for a core):",
  );
  profileLines(summarizeProfileDir(cpuProfileDir, [path.join(repoRoot, 'dist/cli.js')]), p.round.rollouts).forEach(log);
  if (withPerf) {
    // One more round on the same worker with V8's sampler off and Linux's perf on: on-CPU time of every thread.
    const data = path.join(cpuProfileDir, 'perf.data');
    const perf = startPerf(sideP.worker.pid, data);
    await sleep(500);
    const q = await runB(sideP, path.join(dir, 'runs', 'perf'), 0, 'perf');
    await perf.stop();
    const cpuSeconds = Object.values(q.threads).reduce((s, x) => s + x, 0);
    log(`perf round (perf's cost included, NOT counted): ${roundLine(q.round)}`);
    log(
      `Linux perf, on-CPU samples of the worker's threads over that round (${((1e6 * cpuSeconds) / q.round.rollouts).toFixed(0)} µs/rollout of CPU in all, client start → result):`,
    );
    perfLines(data, cpuSeconds, q.round.rollouts, [path.join(repoRoot, 'dist/cli.js')]).forEach(log);
  }
}
