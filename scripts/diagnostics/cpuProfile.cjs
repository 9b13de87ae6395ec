'use strict';
// Preloaded into a bench worker (`npm run bench -- --worker-cpu-profile=DIR`) with `--require`, on
// every thread (the main one and the SDK's workflow thread): Node 20 refuses `--cpu-prof` in
// NODE_OPTIONS, and a worker is only reached through it. V8's sampler runs through the inspector
// and is written in slices of PIVOT_BENCH_CPU_PROFILE_SLICE_S seconds (default 15) to
// PIVOT_BENCH_CPU_PROFILE_DIR as worker-<pid>-t<thread>-<slice>.cpuprofile (Chrome DevTools opens
// them), because a worker stopped by the bench has no moment to write one at exit: the slice under
// way when it stops is lost. Samples are taken on wall time, so a function also holds the time its
// thread waited for a core; the sampler costs the worker CPU, so the run's ratios are not the product's.
const { threadId } = require('node:worker_threads');
const { writeFileSync } = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const dir = process.env.PIVOT_BENCH_CPU_PROFILE_DIR;
if (dir) {
  const sliceMs = 1000 * Number(process.env.PIVOT_BENCH_CPU_PROFILE_SLICE_S || 15);
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 500 });
  session.post('Profiler.start');
  let slice = 0;
  setInterval(() => {
    session.post('Profiler.stop', (error, result) => {
      if (!error) {
        const name = `worker-${process.pid}-t${threadId}-${String(slice++).padStart(3, '0')}.cpuprofile`;
        writeFileSync(path.join(dir, name), JSON.stringify(result.profile));
      }
      session.post('Profiler.start');
    });
  }, sliceMs).unref();
}
