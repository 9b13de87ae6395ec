'use strict';
// V8's CPU sampler in a worker, preloaded with `--require` in NODE_OPTIONS so it runs on every
// thread (the main one and the SDK's workflow thread): Node 20 refuses `--cpu-prof` in NODE_OPTIONS,
// and a bench worker is only reached through it. Samples are taken on wall time, so a function also
// holds the time its thread waited for a core; the sampler costs the worker CPU, so figures taken
// under it are not the product's. Set by the environment:
//
//   PIVOT_MINER_CPU_PROFILE_DIR          where profiles go (Chrome DevTools opens them); unset, nothing runs
//   PIVOT_MINER_CPU_PROFILE_WINDOW       `slices` (default): from the start, a profile every SLICE_S
//                                        seconds, worker-<pid>-t<thread>-<slice>.cpuprofile, because a
//                                        worker stopped by the bench has no moment to write one at exit
//                                        (the slice under way is lost); `marked`: one profile of the
//                                        window between <DIR>/start and <DIR>/stop appearing (a bench
//                                        round), worker-<pid>-t<thread>.cpuprofile
//   PIVOT_MINER_CPU_PROFILE_SLICE_S      slice length, default 15
//   PIVOT_MINER_CPU_PROFILE_INTERVAL_US  sampling interval, default 1000 (V8's)
const { threadId } = require('node:worker_threads');
const { existsSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const dir = process.env.PIVOT_MINER_CPU_PROFILE_DIR;
const window = process.env.PIVOT_MINER_CPU_PROFILE_WINDOW || 'slices';
const intervalUs = Number(process.env.PIVOT_MINER_CPU_PROFILE_INTERVAL_US || 1000);
const profileName = (suffix) => `worker-${process.pid}-t${threadId}${suffix}.cpuprofile`;

function startSampler(session) {
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  session.post('Profiler.start');
}

/** Writes the profile so far under `name`, then calls `then`; a failed stop writes nothing. */
function writeProfile(session, name, then) {
  session.post('Profiler.stop', (error, result) => {
    if (!error) writeFileSync(path.join(dir, name), JSON.stringify(result.profile));
    then();
  });
}

function profileSlices(session) {
  const sliceMs = 1000 * Number(process.env.PIVOT_MINER_CPU_PROFILE_SLICE_S || 15);
  startSampler(session);
  let slice = 0;
  setInterval(() => {
    writeProfile(session, profileName(`-${String(slice++).padStart(3, '0')}`), () => session.post('Profiler.start'));
  }, sliceMs).unref();
}

function profileMarkedWindow(session) {
  let state = 'waiting';
  const timer = setInterval(() => {
    if (state === 'waiting' && existsSync(path.join(dir, 'start'))) {
      state = 'profiling';
      startSampler(session);
    } else if (state === 'profiling' && existsSync(path.join(dir, 'stop'))) {
      state = 'done';
      clearInterval(timer);
      writeProfile(session, profileName(''), () => undefined);
    }
  }, 50);
  timer.unref();
}

if (dir) {
  if (window !== 'slices' && window !== 'marked')
    throw new Error(`PIVOT_MINER_CPU_PROFILE_WINDOW is ${JSON.stringify(window)}; expected slices or marked`);
  const session = new inspector.Session();
  session.connect();
  if (window === 'slices') profileSlices(session);
  else profileMarkedWindow(session);
}
