import { z } from 'zod';

// What the overlap bench reads from an engine's record of served requests (`<start ms> <end ms>`
// per line, written by `scripts/fleet/serve.ts engine --record`): how busy the engine's slots were
// and how long it sat with nothing in flight. Pure, so the figures are checked on synthetic spans.

export interface Span {
  start: number;
  end: number;
}

const spanSchema = z
  .tuple([z.number().finite(), z.number().finite()])
  .refine(([start, end]) => end >= start, { message: 'the end is before the start' });

/** The spans of a record file's text; a bad line is an error naming `file`, the line and why. */
export function parseSpans(text: string, file: string): Span[] {
  const spans: Span[] = [];
  text.split('\n').forEach((line, i) => {
    if (line === '') return;
    const parsed = spanSchema.safeParse(line.split(' ').map(Number));
    if (!parsed.success)
      throw new Error(`${file}:${i + 1}: expected "<start ms> <end ms>": ${parsed.error.issues[0]?.message}`);
    spans.push({ start: parsed.data[0], end: parsed.data[1] });
  });
  return spans;
}

/** [first start, last end] of the spans. */
export function extent(spans: Span[]): [number, number] {
  if (spans.length === 0) throw new Error('the engine served no request');
  return [Math.min(...spans.map((s) => s.start)), Math.max(...spans.map((s) => s.end))];
}

/** Fraction of the slot-time between the first request's start and the last one's end spent serving. */
export function busyShare(spans: Span[], slots: number): number {
  const [from, to] = extent(spans);
  if (to === from) return 1;
  const served = spans.reduce((sum, s) => sum + s.end - s.start, 0);
  return served / (slots * (to - from));
}

/** Fraction of [from, to] during which no span was in flight. */
export function idleShare(spans: Span[], from: number, to: number): number {
  if (to <= from) return 0;
  const sorted = spans
    .map((s) => ({ start: Math.max(s.start, from), end: Math.min(s.end, to) }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start);
  let covered = 0;
  let reach = from;
  for (const s of sorted) {
    if (s.end <= reach) continue;
    covered += s.end - Math.max(s.start, reach);
    reach = s.end;
  }
  return 1 - covered / (to - from);
}
