import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readTimeline, writeAttemptSpans, writeEngineTimeline } from '../../../activities/run/engineTimeline';

const T0 = 1_800_000_000_000;

async function timelineDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'engine-timeline-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

test('the timeline holds each server’s requests in flight over the run, from every attempt’s record', async (t) => {
  const dir = await timelineDir(t);
  const collect = { outPrefix: '/run/rollouts', chunkIndex: 0, attempt: '1-1-1-a' };
  // Two collect requests over the first second; one local-profile call over the second half-second to 1.5 s.
  await writeAttemptSpans(dir, collect, {
    stage: 'collect',
    server: 'agent',
    spans: [
      [T0, T0 + 1000],
      [T0, T0 + 1000],
    ],
  });
  await writeAttemptSpans(
    dir,
    { outPrefix: '/run/local_profile', chunkIndex: 0, attempt: '1-1-1-a' },
    { stage: 'local_profile', server: 'model', spans: [[T0 + 500, T0 + 1500]] },
  );
  const timeline = await readTimeline(dir);
  assert.equal(timeline.spanS, 1.5);
  assert.equal(timeline.unreadable, 0);
  assert.deepEqual(
    timeline.series.map((s) => s.label),
    ['collect → agent (its model calls inside)', 'local_profile → policy model'],
  );
  const [agent, model] = timeline.series.map((s) => s.inFlight);
  const slices = agent!.length;
  // Request-seconds are kept: slice means times the slice's length add up to the spans' lengths.
  assert.ok(Math.abs((sum(agent!) * 1.5) / slices - 2) < 1e-9);
  assert.ok(Math.abs((sum(model!) * 1.5) / slices - 1) < 1e-9);
  assert.ok(Math.abs(agent![0]! - 2) < 1e-9, 'two agent requests at the start');
  assert.equal(agent!.at(-1), 0);
  assert.equal(model![0], 0);
  assert.ok(Math.abs(model!.at(-1)! - 1) < 1e-9, 'one model call at the end');
});

test('a torn record is counted and left out; an attempt without requests writes nothing', async (t) => {
  const dir = await timelineDir(t);
  await writeAttemptSpans(
    dir,
    { outPrefix: '/run/rollouts', chunkIndex: 3, attempt: '2-1-1-a' },
    {
      stage: 'collect',
      server: 'agent',
      spans: [],
    },
  );
  assert.deepEqual(await readdir(dir), []);
  await writeAttemptSpans(
    dir,
    { outPrefix: '/run/rollouts', chunkIndex: 3, attempt: '2-1-1-a' },
    {
      stage: 'collect',
      server: 'agent',
      spans: [[T0, T0 + 250]],
    },
  );
  await writeFile(path.join(dir, 'torn-1-1.json'), '{"stage":"collect","server":"agent","spans":[[1,');
  await writeFile(path.join(dir, 'crashed-2-2.json.tmp'), '{');
  const timeline = await readTimeline(dir);
  assert.equal(timeline.unreadable, 2);
  assert.equal(timeline.series.length, 1);
  assert.equal(timeline.spanS, 0.25);
});

test('the drawing names each server and says when nothing was recorded', async (t) => {
  const runDir = await timelineDir(t);
  const empty = await writeEngineTimeline(runDir, path.join(runDir, 'missing'));
  assert.match(await readFile(empty, 'utf8'), /No requests recorded\./);
  const dir = path.join(runDir, 'engine_timeline');
  await writeAttemptSpans(
    dir,
    { outPrefix: '/run/local_profile', chunkIndex: 0, attempt: '1-1-1-a' },
    {
      stage: 'local_profile',
      server: 'model',
      spans: [[T0, T0 + 4000]],
    },
  );
  const svg = await readFile(await writeEngineTimeline(runDir, dir), 'utf8');
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.match(svg, /local_profile → policy model · peak 1, mean 1 in flight/);
  assert.match(svg, />4 s</);
  assert.doesNotMatch(svg, /<script/i);
});
