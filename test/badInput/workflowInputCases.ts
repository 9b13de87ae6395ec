import type { PipelineCase } from './cases';

// Bad workflow inputs, of the pivot mining workflow, nightly mining and the curriculum.

export const workflowInputCases: PipelineCase[] = [
  {
    name: 'workflow: config file missing',
    input: { config_path: 'config/nope.yaml' },
    expect: 'error',
    message: /nope\.yaml: cannot read config: ENOENT/,
  },
  {
    name: 'workflow: config_path escapes',
    input: { config_path: '../../../../etc/hosts' },
    expect: 'error',
    message: /workflow input: config_path: .*outside the allowed root/,
  },
  {
    name: 'workflow: absolute config_path outside',
    input: { config_path: '/etc/hosts' },
    expect: 'error',
    message: /workflow input: config_path: .*outside the allowed root/,
  },
  {
    name: 'workflow: run_id escapes',
    input: { config_path: 'config/good.yaml', run_id: '../../escape' },
    expect: 'error',
    message: /workflow input: run_id: a letter or digit/,
  },
  {
    name: 'workflow: absolute run_id',
    input: { config_path: 'config/good.yaml', run_id: '/tmp/escape' },
    expect: 'error',
    message: /workflow input: run_id: a letter or digit/,
  },
  {
    name: 'workflow: unknown key',
    input: { config_path: 'config/good.yaml', runid: 'x' },
    expect: 'error',
    message: /workflow input: \(top level\): Unrecognized key: "runid"/,
  },
  // nightly mining and the curriculum load configs through the same confinement
  {
    name: 'nightly: artifacts_root escapes',
    workflow: 'nightlyMiningWorkflow',
    input: { config_path: 'config/nightly_artifacts_root_escapes.yaml' },
    expect: 'error',
    message: /nightly_artifacts_root_escapes\.yaml:2: artifacts_root: .*outside the allowed root/,
  },
  {
    name: 'nightly: absolute pool.dir',
    workflow: 'nightlyMiningWorkflow',
    input: { config_path: 'config/pool_dir_absolute.yaml' },
    expect: 'error',
    message: /pool_dir_absolute\.yaml:7: pool\.dir: .*outside the allowed root/,
  },
  {
    name: 'nightly: pool.dir escapes',
    workflow: 'nightlyMiningWorkflow',
    input: { config_path: 'config/pool_dir_escapes.yaml' },
    expect: 'error',
    message: /pool_dir_escapes\.yaml:7: pool\.dir: .*outside the allowed root/,
  },
  {
    name: 'nightly: pool.dir through a symlink out',
    workflow: 'nightlyMiningWorkflow',
    input: { config_path: 'config/pool_dir_symlink.yaml' },
    expect: 'error',
    message: /pool_dir_symlink\.yaml:8: pool\.dir: .*outside the allowed root/,
  },
  {
    name: 'nightly: config_path escapes',
    workflow: 'nightlyMiningWorkflow',
    input: { config_path: '../../../../etc/hosts' },
    expect: 'error',
    message: /workflow input: config_path: .*outside the allowed root/,
  },
  {
    name: 'curriculum: artifacts_root escapes',
    workflow: 'pivotCurriculumWorkflow',
    input: { config_path: 'config/nightly_artifacts_root_escapes.yaml', initial_pool: 'input/good_quirks.jsonl' },
    expect: 'error',
    message: /nightly_artifacts_root_escapes\.yaml:2: artifacts_root: .*outside the allowed root/,
  },
  {
    name: 'curriculum: absolute pool.dir',
    workflow: 'pivotCurriculumWorkflow',
    input: { config_path: 'config/pool_dir_absolute.yaml', initial_pool: 'input/good_quirks.jsonl' },
    expect: 'error',
    message: /pool_dir_absolute\.yaml:7: pool\.dir: .*outside the allowed root/,
  },
  {
    name: 'curriculum: pool.dir through a symlink out',
    workflow: 'pivotCurriculumWorkflow',
    input: { config_path: 'config/pool_dir_symlink.yaml', initial_pool: 'input/good_quirks.jsonl' },
    expect: 'error',
    message: /pool_dir_symlink\.yaml:8: pool\.dir: .*outside the allowed root/,
  },
  {
    name: 'curriculum: initial_pool escapes',
    workflow: 'pivotCurriculumWorkflow',
    input: { config_path: 'config/pool_good.yaml', initial_pool: '../../../../etc/hosts' },
    expect: 'error',
    message: /workflow input: initial_pool: .*outside the allowed root/,
  },
  {
    name: 'curriculum: absolute initial_pool',
    workflow: 'pivotCurriculumWorkflow',
    input: { config_path: 'config/pool_good.yaml', initial_pool: '/etc/hosts' },
    expect: 'error',
    message: /workflow input: initial_pool: .*outside the allowed root/,
  },
  {
    name: 'workflow: seed mistyped',
    input: { config_path: 'config/good.yaml', seed: 'seven' },
    expect: 'error',
    message: /workflow input: seed: Invalid input: expected number/,
  },
];
