import v8 from 'node:v8';
import vm from 'node:vm';

// A worker's start-up (compiling the project's modules, reading the workflow bundle, creating the
// Temporal runtime) leaves tens of megabytes of garbage and a young generation grown to hold it.
// Nothing allocates again until the first task arrives, so V8 never collects it on its own and an
// idle worker keeps that memory. One full collection, run once here, gives it back.

/** One full garbage collection, as `node --expose-gc` would allow, without that flag on the command line. */
export function collectStartupGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  // A context created while the flag is set gets the `gc` function (the main context never will);
  // the flag goes off again at once, so workflow sandboxes created later have no `gc`.
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc();
}
