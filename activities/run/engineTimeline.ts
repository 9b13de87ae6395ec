import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { mkdirDurably, writeFileDurably } from '../../gym/durable';
import { renderTimelineSvg, type Timeline } from '../../gym/report/timeline';
import type { RolloutStage, RunPlan } from '../../contracts/payloads';

// The report's engine timeline (docs/architecture.md, "Engine timeline"): each completed chunk
// attempt records when each of its requests was in flight, one file per attempt in the run's
// timeline directory; publishing draws them. These are wall-clock times, so they are the run's own
// record, never compared across runs and never part of the dataset.

export const ENGINE_TIMELINE_DIR = 'engine_timeline';
export const ENGINE_TIMELINE_SVG = 'engine_timeline.svg';
/** Slices the timeline is drawn in: fine enough to see a stage's tail, small whatever the run's size. */
const SLICES = 300;

export const isEngineTimeline = (rel: string) =>
  rel === ENGINE_TIMELINE_SVG || rel.startsWith(`${ENGINE_TIMELINE_DIR}${path.sep}`);

const attemptSpansSchema = z.object({
  stage: z.enum(['collect', 'local_profile']),
  /** What the requests went to: a NeMo Gym agent's /run, or the policy model itself. */
  server: z.enum(['agent', 'model']),
  /** [start, end] in epoch milliseconds, one per request. */
  spans: z.array(z.tuple([z.number(), z.number()])),
});
type AttemptSpans = z.infer<typeof attemptSpansSchema>;

/** Collects one chunk attempt's request spans in memory (at most a chunk's requests). */
export class RequestSpans {
  readonly spans: Array<[number, number]> = [];
  /** Passed to an executor: called as each request ends. */
  readonly record = (startMs: number, endMs: number): void => {
    this.spans.push([startMs, endMs]);
  };
}

/**
 * Writes a completed attempt's spans. Called after the attempt's fence check, so an attempt another
 * one superseded leaves no record; the file is named by the chunk and the attempt, never overwritten.
 */
export async function writeAttemptSpans(
  timelineDir: string,
  chunk: { outPrefix: string; chunkIndex: number; attempt: string },
  record: AttemptSpans,
): Promise<void> {
  if (record.spans.length === 0) return;
  const stem = createHash('sha256').update(chunk.outPrefix).digest('hex').slice(0, 12);
  await mkdirDurably(timelineDir);
  const file = path.join(timelineDir, `${stem}-${chunk.chunkIndex}-${chunk.attempt}.json`);
  await writeFileDurably(file, JSON.stringify(record));
}

/** What a stage's chunks send their requests to. */
export function timelineServer(plan: RunPlan, stage: RolloutStage): AttemptSpans['server'] {
  return stage === 'collect' || plan.config.local_profile.verifier === 'nemo_gym_agent' ? 'agent' : 'model';
}

export function serverLabel(stage: RolloutStage, server: AttemptSpans['server']): string {
  return `${stage} → ${server === 'agent' ? 'agent (its model calls inside)' : 'policy model'}`;
}

async function readRecords(timelineDir: string): Promise<{ files: string[]; unreadable: number }> {
  const names = await readdir(timelineDir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const files = names.filter((n) => n.endsWith('.json')).map((n) => path.join(timelineDir, n));
  return { files, unreadable: names.filter((n) => n.endsWith('.tmp')).length };
}

async function parseRecord(file: string): Promise<AttemptSpans | undefined> {
  try {
    return attemptSpansSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** Adds each span's overlap with each slice, so a slice holds the mean requests in flight over it. */
function addSpans(slices: number[], spans: AttemptSpans['spans'], startMs: number, sliceMs: number): void {
  for (const [from, to] of spans) {
    const first = Math.min(SLICES - 1, Math.floor((from - startMs) / sliceMs));
    const last = Math.min(SLICES - 1, Math.floor((to - startMs) / sliceMs));
    for (let i = first; i <= last; i++) {
      const lo = Math.max(from, startMs + i * sliceMs);
      const hi = Math.min(to, startMs + (i + 1) * sliceMs);
      if (hi > lo) slices[i]! += (hi - lo) / sliceMs;
    }
  }
}

/** Reads every record twice (bounds, then slices), one file at a time: memory stays flat in the run's size. */
export async function readTimeline(timelineDir: string): Promise<Timeline> {
  const { files, unreadable: torn } = await readRecords(timelineDir);
  let unreadable = torn;
  let startMs = Infinity;
  let endMs = -Infinity;
  const readable: string[] = [];
  for (const file of files) {
    const record = await parseRecord(file);
    if (!record) {
      unreadable++;
      continue;
    }
    readable.push(file);
    for (const [from, to] of record.spans) {
      startMs = Math.min(startMs, from);
      endMs = Math.max(endMs, to);
    }
  }
  if (readable.length === 0) return { spanS: 0, series: [], unreadable };
  const sliceMs = Math.max(1, endMs - startMs) / SLICES;
  const byLabel = new Map<string, number[]>();
  for (const file of readable) {
    const record = await parseRecord(file);
    if (!record) continue;
    const label = serverLabel(record.stage, record.server);
    if (!byLabel.has(label)) byLabel.set(label, new Array<number>(SLICES).fill(0));
    addSpans(byLabel.get(label)!, record.spans, startMs, sliceMs);
  }
  const series = [...byLabel]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, inFlight]) => ({ label, inFlight }));
  return { spanS: (endMs - startMs) / 1000, series, unreadable };
}

/** Draws the run's timeline beside it; returns the drawing's path. */
export async function writeEngineTimeline(runDir: string, timelineDir: string): Promise<string> {
  const svg = path.join(runDir, ENGINE_TIMELINE_SVG);
  await writeFileDurably(svg, renderTimelineSvg(await readTimeline(timelineDir)));
  return svg;
}
