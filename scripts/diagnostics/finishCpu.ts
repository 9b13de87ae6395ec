import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { mergedPaths } from '../../activities/chunk/chunkIndex';
import { profileStage } from '../../activities/stage/profile';
import { runHealthChecks } from '../../gym/healthChecks';
import { readLines } from '../../gym/jsonl';
import { parseFlags, refuse, wholeNumber } from '../bench/flags';

// CPU per rollout of the pieces of a collect stage's finish that read every rollout, run in this
// process over a published stage: the health checks (0.7.0's verdicts and summary, as finishStage
// writes them) and the reward profile (through the merge's digests and the row index), beside a bare
// JSON.parse of every rollout line as a floor. Each piece runs once to warm up, then --repeats times;
// each run prints its process CPU (user + system) per rollout, wall time and V8 collections.
// What they write goes to a scratch directory linked to the stage, never beside the stage.
//
//   npx tsx scripts/diagnostics/finishCpu.ts --stage=RUN_DIR/rollouts [--repeats=7] [--pieces=health,profile,parse]

const PIECES = ['health', 'profile', 'parse'] as const;
type Piece = (typeof PIECES)[number];

const flags = parseFlags(
  'npx tsx scripts/diagnostics/finishCpu.ts --stage=RUN_DIR/rollouts [--repeats=7] [--pieces=health,profile,parse]',
  { stage: { type: 'string' }, repeats: { type: 'string' }, pieces: { type: 'string' } },
);

/** A view of the stage in `dir`: its rollouts, digests and materialized inputs, linked. */
async function linkStage(stage: string, dir: string): Promise<string> {
  const stem = path.basename(stage);
  const view = path.join(dir, stem);
  for (const entry of await readdir(path.dirname(stage))) {
    if (entry.startsWith(`${stem}_materialized_inputs`) || entry === `${stem}.jsonl`)
      await symlink(path.resolve(path.dirname(stage), entry), path.join(dir, entry));
  }
  await mkdir(`${view}_shards`);
  await symlink(path.resolve(mergedPaths(stage).digestsPath), mergedPaths(view).digestsPath);
  return view;
}

async function runPiece(piece: Piece, view: string): Promise<void> {
  if (piece === 'health') {
    const verdictsPath = `${view}_rollout_verdicts.jsonl`;
    await runHealthChecks([`${view}.jsonl`], [], { verdictsPath });
  } else if (piece === 'profile') {
    await profileStage({ outPrefix: view, allowPartialRollouts: false, nemoGymVersion: '0.7.0' });
  } else {
    for await (const { text } of readLines(`${view}.jsonl`)) JSON.parse(text);
  }
}

async function countRollouts(view: string): Promise<number> {
  let n = 0;
  for await (const { text } of readLines(`${view}.jsonl`)) if (text.trim() !== '') n++;
  return n;
}

async function main(): Promise<void> {
  if (flags.stage === undefined) refuse('--stage=RUN_DIR/rollouts is required');
  const repeats = wholeNumber('repeats', flags.repeats) ?? 7;
  const pieces = (flags.pieces ?? PIECES.join(',')).split(',') as Piece[];
  for (const p of pieces) if (!PIECES.includes(p)) refuse(`--pieces: unknown piece ${p}; one of ${PIECES.join(', ')}`);
  const gc = { count: 0, ms: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.ms += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const dir = await mkdtemp(path.join(tmpdir(), 'finish-cpu-'));
  try {
    const view = await linkStage(flags.stage, dir);
    const rollouts = await countRollouts(view);
    console.log(`${flags.stage}: ${rollouts} rollouts`);
    for (const piece of pieces) {
      await runPiece(piece, view);
      for (let i = 0; i < repeats; i++) {
        Object.assign(gc, { count: 0, ms: 0 });
        const [cpu, wall] = [process.cpuUsage(), performance.now()];
        await runPiece(piece, view);
        // GC entries are delivered on a later turn of the loop.
        await new Promise((resolve) => setImmediate(resolve));
        const used = process.cpuUsage(cpu);
        const perRollout = (used.user + used.system) / rollouts;
        console.log(
          `${piece}: ${perRollout.toFixed(1)} µs CPU/rollout, ${(performance.now() - wall).toFixed(0)} ms wall, ` +
            `${gc.count} GCs (${gc.ms.toFixed(0)} ms)`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
