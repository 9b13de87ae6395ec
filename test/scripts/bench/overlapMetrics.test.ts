import assert from 'node:assert/strict';
import { test } from 'node:test';
import { busyShare, extent, idleShare, parseSpans, type Span } from '../../../scripts/bench/overlapMetrics';

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`);

test('busy is the served slot-time over slots x first-to-last request', () => {
  // Two slots over [0, 100]: 100 + 50 ms served of 200 ms of slot-time.
  const spans: Span[] = [
    { start: 0, end: 100 },
    { start: 20, end: 70 },
  ];
  close(busyShare(spans, 2), 0.75);
  close(busyShare(spans, 1), 1.5);
  // Time before the first request and after the last one does not count.
  close(busyShare([{ start: 1000, end: 1010 }], 1), 1);
  assert.throws(() => busyShare([], 4), /served no request/);
});

test('idle share counts only time with nothing in flight, overlaps merged', () => {
  const spans: Span[] = [
    { start: 10, end: 40 },
    { start: 20, end: 30 },
    { start: 35, end: 50 },
    { start: 80, end: 100 },
  ];
  const [from, to] = extent(spans);
  assert.deepEqual([from, to], [10, 100]);
  // In flight 10-50 and 80-100: 60 of 90 ms; idle 30 ms.
  close(idleShare(spans, from, to), 30 / 90);
  // A window wider than the spans adds its uncovered ends.
  close(idleShare(spans, 0, 110), 50 / 110);
  // Spans cut to the window.
  close(idleShare(spans, 25, 45), 0);
  close(idleShare(spans, 50, 80), 1);
});

test('an engine record is read line by line, a bad line named with its file and line', () => {
  assert.deepEqual(parseSpans('1.5 2.5\n3 4\n', 'e.spans'), [
    { start: 1.5, end: 2.5 },
    { start: 3, end: 4 },
  ]);
  assert.throws(() => parseSpans('1 2\n5 4\n', 'e.spans'), /^Error: e\.spans:2: .*end is before the start/);
  assert.throws(() => parseSpans('1 2\nx 4\n', 'e.spans'), /^Error: e\.spans:2: expected "<start ms> <end ms>"/);
});
