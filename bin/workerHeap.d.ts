// Types of bin/workerHeap.js, which stays plain JavaScript because it runs before any TypeScript loader.

/** The node flags a worker process runs with (`--max-old-space-size=N`, from PIVOT_MINER_WORKER_HEAP_MB). */
export function workerHeapArgs(env?: NodeJS.ProcessEnv): string[];

/** `env` with MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=131072, each unless it is set; neither when PIVOT_MINER_WORKER_HEAP_MB is 0. */
export function workerProcessEnv<E extends NodeJS.ProcessEnv>(env?: E): E;

/** Starts this `worker` command again in a child with the heap flag when it lacks one; true when it did. */
export function relaunchWorkerWithHeapLimit(): boolean;
