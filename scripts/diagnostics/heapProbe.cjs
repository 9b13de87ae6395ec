'use strict';
// Preloaded into a bench worker (`npm run bench -- --worker-heap`) with `--expose-gc --require`.
// Plain JavaScript because it loads before any TypeScript loader. Every PIVOT_BENCH_HEAP_PROBE_MS it
// forces a full collection and appends the main thread's live heap to PIVOT_BENCH_HEAP_PROBE, so the
// bench can tell memory that is held (grows with rows) from garbage the GC has not yet returned.
// The forced collections lower RSS too: RSS figures of such a run are not the product's.
const { isMainThread } = require('node:worker_threads');
const { appendFileSync } = require('node:fs');

const out = process.env.PIVOT_BENCH_HEAP_PROBE;
if (isMainThread && out && typeof globalThis.gc === 'function') {
  const every = Number(process.env.PIVOT_BENCH_HEAP_PROBE_MS || 5000);
  setInterval(() => {
    globalThis.gc();
    const m = process.memoryUsage();
    appendFileSync(
      out,
      `${JSON.stringify({ t: Date.now(), heapUsed: m.heapUsed, external: m.external, rss: m.rss })}\n`,
    );
  }, every).unref();
}
