import type { FsOp } from '../forgetfulFs/mount';

// Where the power-loss scenario cuts the power: filesystem operations of the pipeline, in the order a
// run reaches them, named by stage. The filesystem freezes at the nth matching operation (counted from
// when the point is armed, after the previous cut), so each cut lands at that exact step: a chunk
// half-written, a merge between its appends, a finish before its metrics are renamed into place,
// a publish between two renames. Paths are relative to the artifacts root; a rename reads "from -> to".

export interface PowerCutPoint {
  stage: string;
  what: string;
  when: 'before' | 'after';
  op: FsOp;
  nth: number;
  pattern: string;
}

const RUN = 'runs/chaos/';
const POOL = 'pools/chaos/';
const CURRICULUM = `${POOL}curricula/[^/]+/`;

/** The cut points of one collect-like stage whose files start with `prefix`. */
function stagePoints(stage: string, prefix: string): PowerCutPoint[] {
  const shards = `${RUN}${prefix}_shards/`;
  // A chunk attempt writes <chunk>.attempts/<token>.jsonl and <token>_failures.jsonl; a token ends
  // in a hex digit, which tells its rollouts shard from the sidecar without naming its format.
  const shardFile = `${shards}\\d+\\.attempts/[^/]+\\.jsonl$`;
  const shardCreate = `${shards}\\d+\\.attempts/[^/]*[0-9a-f]\\.jsonl$`;
  const published = `-> ${RUN}${prefix}_\\S*(metrics|profiling)`;
  return [
    {
      stage,
      what: 'materializing its inputs',
      when: 'before',
      op: 'rename',
      nth: 1,
      pattern: `${RUN}${prefix}_materialized`,
    },
    { stage, what: 'mid-chunk', when: 'before', op: 'write', nth: 3, pattern: shardFile },
    // With four chunks in flight, the fifth chunk starts only once one has completed.
    { stage, what: 'right after a chunk completed', when: 'before', op: 'create', nth: 5, pattern: shardCreate },
    { stage, what: 'mid-chunk, later', when: 'before', op: 'write', nth: 25, pattern: shardFile },
    { stage, what: 'mid-merge', when: 'before', op: 'write', nth: 2, pattern: `${shards}merge/` },
    {
      stage,
      what: "between the merged files' renames",
      when: 'before',
      op: 'rename',
      nth: 2,
      pattern: `${shards}merge/\\S+ -> ${RUN}${prefix}`,
    },
    { stage, what: 'in the finish', when: 'before', op: 'rename', nth: 1, pattern: published },
    { stage, what: 'in the finish, later', when: 'after', op: 'rename', nth: 2, pattern: published },
  ];
}

/**
 * Early profiling (`overlap: true`) runs beside collect, files its samples once convert is done, and
 * removes its files beside and after the run's local profile. Its points sit where a run reaches them
 * whatever the timing: a point armed after its step is over is missed, the run goes on while the
 * harness waits for it, and two misses in a row end the cuts.
 */
const EARLY: Record<'segmentCopy' | 'segmentChunk' | 'filing' | 'segmentsRemoval' | 'filedRemoval', PowerCutPoint> = {
  segmentCopy: {
    stage: 'early_profiling',
    what: "copying a segment's finished rollouts",
    when: 'before',
    op: 'write',
    nth: 1,
    // A segment is built under its attempt's name, then renamed into place.
    pattern: `${RUN}prefetch/rows-\\d+-\\d+\\.[^/]+\\.tmp/rollouts`,
  },
  segmentChunk: {
    stage: 'early_profiling',
    what: "mid-chunk of a segment's profile",
    when: 'before',
    op: 'write',
    nth: 3,
    pattern: `${RUN}prefetch/rows-\\d+-\\d+/local_profile_shards/\\d+\\.attempts/`,
  },
  filing: {
    stage: 'early_profiling',
    what: 'filing its samples for the run',
    when: 'before',
    op: 'write',
    nth: 1,
    // A pass stages its directory beside the filed one (the second pass's beside tail/).
    pattern: `${RUN}local_profile_prefetched(/tail)?\\.[^/]+\\.tmp/`,
  },
  segmentsRemoval: {
    stage: 'early_profiling',
    what: 'mid-removal of its segments',
    when: 'after',
    op: 'unlink',
    nth: 3,
    pattern: `${RUN}prefetch/`,
  },
  filedRemoval: {
    stage: 'early_profiling',
    what: 'mid-removal of its filed samples',
    when: 'after',
    op: 'unlink',
    nth: 1,
    pattern: `${RUN}local_profile_prefetched/`,
  },
};

const [collectMaterialize, collectMidChunk, collectAfterChunk, collectLaterChunk, ...collectRest] = stagePoints(
  'collect',
  'rollouts',
);
const [profileMaterialize, ...profileRest] = stagePoints('local_profile', 'local_profile');

export const POWER_CUT_POINTS: PowerCutPoint[] = [
  { stage: 'prepare', what: 'writing the run manifest', when: 'after', op: 'rename', nth: 1, pattern: 'run_manifest' },
  collectMaterialize!,
  collectMidChunk!,
  collectAfterChunk!,
  EARLY.segmentCopy,
  collectLaterChunk!,
  EARLY.segmentChunk,
  ...collectRest,
  { stage: 'convert', what: 'writing candidates', when: 'before', op: 'write', nth: 2, pattern: `${RUN}candidates` },
  {
    stage: 'convert',
    what: 'after the candidates',
    when: 'after',
    op: 'any',
    nth: 1,
    pattern: `${RUN}candidates_metrics`,
  },
  EARLY.filing,
  // The segments' removal runs beside the run's local profile, and starts before its child workflow
  // has started materializing: cut after the materialization, it would be over.
  EARLY.segmentsRemoval,
  profileMaterialize!,
  ...profileRest,
  EARLY.filedRemoval,
  { stage: 'publish', what: 'writing the dataset', when: 'before', op: 'write', nth: 1, pattern: `${RUN}dataset/` },
  {
    stage: 'publish',
    what: 'between publishing renames',
    when: 'after',
    op: 'rename',
    nth: 1,
    pattern: `-> ${RUN}dataset/`,
  },
  {
    stage: 'publish',
    what: 'between publishing renames, later',
    when: 'after',
    op: 'rename',
    nth: 2,
    pattern: `-> ${RUN}dataset/`,
  },
  { stage: 'publish', what: 'the run summary', when: 'before', op: 'rename', nth: 1, pattern: `-> ${RUN}run_summary` },
  ...poolPoints(),
];

/**
 * The nightly run and the curriculum round that follow the pipeline (poolPhase.ts): a version is
 * staged, renamed into place, `latest` swapped to it, then the sources manifest or the retirements
 * recorded. A cut right after the rename leaves a committed version whose activity never reported.
 */
function poolPoints(): PowerCutPoint[] {
  const committed = (dir: string) => `\\.staging -> ${dir}versions/[^/]+$`;
  return [
    {
      stage: 'nightly',
      what: 'mid-chunk of its local profile',
      when: 'before',
      op: 'write',
      nth: 3,
      pattern: `${POOL}runs/[^/]+/local_profile_shards/\\d+\\.attempts/`,
    },
    {
      stage: 'nightly',
      what: 'staging its version',
      when: 'before',
      op: 'write',
      nth: 2,
      pattern: `${POOL}versions/\\.`,
    },
    {
      stage: 'nightly',
      what: 'right after its version was committed',
      when: 'after',
      op: 'rename',
      nth: 1,
      pattern: committed(POOL),
    },
    {
      stage: 'nightly',
      what: 'after latest moved, before the manifest',
      when: 'after',
      op: 'rename',
      nth: 1,
      pattern: `-> ${POOL}latest$`,
    },
    {
      stage: 'curriculum',
      what: 'copying its initial pool',
      when: 'after',
      op: 'create',
      nth: 1,
      pattern: `${CURRICULUM}initial_pool\\.jsonl$`,
    },
    {
      stage: 'curriculum',
      what: 'mid-chunk of the round',
      when: 'before',
      op: 'write',
      nth: 3,
      pattern: `${CURRICULUM}runs/round-001/local_profile_shards/\\d+\\.attempts/`,
    },
    {
      stage: 'curriculum',
      what: 'right after the round was committed',
      when: 'after',
      op: 'rename',
      nth: 1,
      pattern: committed(CURRICULUM),
    },
    {
      stage: 'curriculum',
      what: 'recording the retirements',
      when: 'before',
      op: 'rename',
      nth: 1,
      pattern: `${CURRICULUM}retired\\.jsonl\\.tmp -> `,
    },
  ];
}

/** The run's stages in order, as pivotMiningWorkflow's progress query names them. */
const RUN_STAGES = ['prepare', 'serve', 'collect', 'convert', 'local_profile', 'publish', 'done'];
/** The last run stage in which a point's step can still come; the pool's points have none. */
const LAST_RUN_STAGE: Record<string, string> = {
  prepare: 'prepare',
  collect: 'collect',
  convert: 'convert',
  // Segments still profile while the run converts, and it files and removes them in its local profile.
  early_profiling: 'local_profile',
  local_profile: 'local_profile',
  publish: 'publish',
};

/** Whether the run (at `runStage`, when known) is past every step `point` could cut in. */
export function pointPassed(point: PowerCutPoint, runStage: string | undefined): boolean {
  const last = LAST_RUN_STAGE[point.stage];
  if (last === undefined || runStage === undefined || !RUN_STAGES.includes(runStage)) return false;
  return RUN_STAGES.indexOf(runStage) > RUN_STAGES.indexOf(last);
}
