'use strict';
// Preloaded into the peer bench's profiled worker (`npm run bench -- --peer --worker-cpu-profile=DIR`)
// with `--require` in NODE_OPTIONS, so it runs on every thread of the worker (the main one and the
// SDK's workflow thread). Unlike scripts/diagnostics/cpuProfile.cjs, which writes fixed time slices,
// this one profiles exactly one round: the bench creates `<DIR>/start` when the round begins and
// `<DIR>/stop` when it ends, and each thread, polling for them, starts V8's sampler on the first and
// writes `<DIR>/worker-<pid>-t<thread>.cpuprofile` on the second. The sampler costs the worker CPU, so
// the profiled round is never one of the counted rounds.
const { threadId } = require('node:worker_threads');
const { existsSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const inspector = require('node:inspector');

const dir = process.env.PIVOT_PEER_CPU_PROFILE_DIR;
if (dir) {
  const session = new inspector.Session();
  session.connect();
  let state = 'waiting';
  const timer = setInterval(() => {
    if (state === 'waiting' && existsSync(path.join(dir, 'start'))) {
      state = 'profiling';
      session.post('Profiler.enable');
      session.post('Profiler.setSamplingInterval', {
        interval: Number(process.env.PIVOT_PEER_CPU_PROFILE_INTERVAL_US || 1000),
      });
      session.post('Profiler.start');
    } else if (state === 'profiling' && existsSync(path.join(dir, 'stop'))) {
      state = 'done';
      clearInterval(timer);
      session.post('Profiler.stop', (error, result) => {
        if (!error)
          writeFileSync(
            path.join(dir, `worker-${process.pid}-t${threadId}.cpuprofile`),
            JSON.stringify(result.profile),
          );
      });
    }
  }, 50);
  timer.unref();
}
