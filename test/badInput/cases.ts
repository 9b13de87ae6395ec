// The bad-input corpus (test/badInput/corpus, plus one 20 MB line made at test time): each case,
// the entry point it goes through and the outcome it must have. Messages are matched loosely on
// what a user needs: the file, the line and the reason.

export type Outcome = 'error' | 'success' | 'skip-audit';

/** A pipeline run on a real Temporal server; `config` is relative to the worker base dir. */
export interface PipelineCase {
  name: string;
  /** A workflow input; a collect input file becomes a generated config pointing at it. */
  input:
    | { config_path: string; run_id?: unknown; seed?: unknown; runid?: unknown; initial_pool?: unknown }
    | { collect_input: string };
  /** The workflow the input goes to; default pivotMiningWorkflow. */
  workflow?: 'nightlyMiningWorkflow' | 'pivotCurriculumWorkflow';
  expect: Outcome;
  message: RegExp;
}

export const pipelineCases: PipelineCase[] = [
  // collect input files
  {
    name: 'invalid JSON line',
    input: { collect_input: 'input/invalid_json.jsonl' },
    expect: 'error',
    message: /invalid_json\.jsonl:2: invalid JSON/,
  },
  {
    name: 'row is an array',
    input: { collect_input: 'input/row_is_array.jsonl' },
    expect: 'error',
    message: /row_is_array\.jsonl:2: not a task row/,
  },
  {
    name: 'row is a string',
    input: { collect_input: 'input/row_is_string.jsonl' },
    expect: 'error',
    message: /row_is_string\.jsonl:1: not a task row/,
  },
  {
    name: 'row is null',
    input: { collect_input: 'input/row_is_null.jsonl' },
    expect: 'error',
    message: /row_is_null\.jsonl:3: not a task row/,
  },
  {
    name: 'missing responses_create_params',
    input: { collect_input: 'input/missing_responses_create_params.jsonl' },
    expect: 'error',
    message: /missing_responses_create_params\.jsonl:1: not a task row: responses_create_params/,
  },
  {
    name: 'responses_create_params mistyped',
    input: { collect_input: 'input/responses_create_params_is_string.jsonl' },
    expect: 'error',
    message: /responses_create_params_is_string\.jsonl:1: not a task row: responses_create_params/,
  },
  {
    name: 'input not a list',
    input: { collect_input: 'input/input_not_a_list.jsonl' },
    expect: 'error',
    message: /input_not_a_list\.jsonl:2: not a task row: responses_create_params\.input/,
  },
  {
    name: 'tools not a list',
    input: { collect_input: 'input/tools_not_a_list.jsonl' },
    expect: 'error',
    message: /tools_not_a_list\.jsonl:1: not a task row: responses_create_params\.tools/,
  },
  {
    name: 'tool not an object',
    input: { collect_input: 'input/tool_not_an_object.jsonl' },
    expect: 'error',
    message: /tool_not_an_object\.jsonl:1: not a task row: responses_create_params\.tools\.0/,
  },
  {
    name: '_ng_task_index mistyped',
    input: { collect_input: 'input/task_index_is_string.jsonl' },
    expect: 'error',
    message: /task_index_is_string\.jsonl:1: not a task row: _ng_task_index/,
  },
  {
    name: 'agent_ref mistyped',
    input: { collect_input: 'input/agent_ref_is_string.jsonl' },
    expect: 'error',
    message: /agent_ref_is_string\.jsonl:1: not a task row: agent_ref/,
  },
  {
    name: 'agent_ref names no known agent',
    input: { config_path: 'config/unknown_agent.yaml' },
    expect: 'error',
    message: /unknown_agent\.jsonl:2: agent_ref\.name "nobody_agent" is not an agent the servers know/,
  },
  {
    name: 'extra_body not JSON',
    input: { collect_input: 'input/extra_body_not_json.jsonl' },
    expect: 'error',
    message: /extra_body_not_json\.jsonl:2: responses_create_params\.metadata\.extra_body is not a JSON string/,
  },
  {
    name: 'empty file',
    input: { collect_input: 'input/empty.jsonl' },
    expect: 'error',
    message: /empty\.jsonl: no task rows/,
  },
  {
    name: 'blank lines only',
    input: { collect_input: 'input/blank_lines_only.jsonl' },
    expect: 'error',
    message: /blank_lines_only\.jsonl: no task rows/,
  },
  {
    name: 'invalid UTF-8',
    input: { collect_input: 'input/invalid_utf8.jsonl' },
    expect: 'error',
    message: /invalid_utf8\.jsonl:2: invalid UTF-8/,
  },
  {
    name: 'torn last line',
    input: { collect_input: 'input/torn_last_line.jsonl' },
    expect: 'error',
    message: /torn_last_line\.jsonl:3: torn last line/,
  },
  {
    name: '20 MB line (not a task row)',
    input: { collect_input: 'input/huge_line.jsonl' },
    expect: 'error',
    message: /huge_line\.jsonl:2: not a task row: responses_create_params/,
  },
  // pipeline configs
  {
    name: 'config: unknown key',
    input: { config_path: 'config/unknown_key.yaml' },
    expect: 'error',
    message: /unknown_key\.yaml:9: collect: Unrecognized key: "chunksize"/,
  },
  {
    name: 'config: wrong type',
    input: { config_path: 'config/wrong_type.yaml' },
    expect: 'error',
    message: /wrong_type\.yaml:7: collect\.num_repeats: expected an integer >= 1, or a dict/,
  },
  {
    name: 'config: invalid YAML',
    input: { config_path: 'config/invalid_yaml.yaml' },
    expect: 'error',
    message: /invalid_yaml\.yaml:\d+: invalid YAML/,
  },
  {
    name: 'config: missing required key',
    input: { config_path: 'config/missing_required_key.yaml' },
    expect: 'error',
    message: /missing_required_key\.yaml:5: collect\.input_jsonl: Invalid input: expected string/,
  },
  {
    name: 'config: bad enum value',
    input: { config_path: 'config/bad_enum.yaml' },
    expect: 'error',
    message: /bad_enum\.yaml:12: local_profile\.model\.api: Invalid option/,
  },
  {
    name: 'config: inline api_key (not allowed)',
    input: { config_path: 'config/api_key_inline.yaml' },
    expect: 'error',
    message: /api_key_inline\.yaml:12: local_profile\.model: Unrecognized key: "api_key"/,
  },
  {
    name: 'config: not a mapping',
    input: { config_path: 'config/not_a_mapping.yaml' },
    expect: 'error',
    message: /not_a_mapping\.yaml:1: \(top level\): Invalid input: expected object/,
  },
  {
    name: 'config: empty file',
    input: { config_path: 'config/empty.yaml' },
    expect: 'error',
    message: /empty\.yaml:1: \(top level\): Invalid input: expected object/,
  },
  {
    name: 'config: artifacts_root escapes',
    input: { config_path: 'config/artifacts_root_escapes.yaml' },
    expect: 'error',
    message: /artifacts_root_escapes\.yaml:3: artifacts_root: .*outside the allowed root/,
  },
  {
    name: 'config: input_jsonl escapes',
    input: { config_path: 'config/input_escapes.yaml' },
    expect: 'error',
    message: /input_escapes\.yaml:5: collect\.input_jsonl: .*outside the allowed root/,
  },
  {
    name: 'config: input_jsonl missing',
    input: { config_path: 'config/input_missing.yaml' },
    expect: 'error',
    message: /input_missing\.yaml:5: collect\.input_jsonl: .*does_not_exist\.jsonl cannot read: ENOENT/,
  },
  {
    name: 'config: input_jsonl is a directory',
    input: { config_path: 'config/input_is_directory.yaml' },
    expect: 'error',
    message: /input_is_directory\.yaml:5: collect\.input_jsonl: .* is not a regular file/,
  },
  // workflow inputs
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

/** A CLI invocation (`pivot-miner <argv>`); `{corpus}` and `{out}` are replaced by directories. */
export interface CliCase {
  name: string;
  argv: string[];
  expect: Outcome;
  /** Matched against stderr for errors, stdout otherwise. */
  message: RegExp;
  /** For skip audits: a reason that must appear in candidates_skipped.jsonl. */
  skipReason?: string;
}

const convert = (file: string, ...extra: string[]) => [
  'convert',
  '--input',
  `{corpus}/convert/${file}`,
  '--agent-name',
  'pivot_agent',
  '--out-dir',
  '{out}',
  ...extra,
];

export const cliCases: CliCase[] = [
  {
    name: 'convert: unknown source shape',
    argv: convert('unknown_shape.jsonl'),
    expect: 'error',
    message: /unknown_shape\.jsonl:1: no source format fits this row/,
  },
  {
    name: 'convert: task row, not a rollout',
    argv: convert('task_row_not_rollout.jsonl'),
    expect: 'error',
    message: /task_row_not_rollout\.jsonl:1: no source format fits.*looks like a task row/,
  },
  {
    name: 'convert: invalid JSON line',
    argv: convert('invalid_json.jsonl'),
    expect: 'error',
    message: /invalid_json\.jsonl:2: invalid JSON/,
  },
  {
    name: 'convert: row is a number',
    argv: convert('row_is_number.jsonl'),
    expect: 'error',
    message: /row_is_number\.jsonl:2: expected a JSON object, saw number 42/,
  },
  {
    name: 'convert: forced format does not fit',
    argv: convert('task_row_not_rollout.jsonl', '--source-format', 'chat_completions'),
    expect: 'error',
    message: /task_row_not_rollout\.jsonl:1: .*chat_completions/,
  },
  {
    name: 'convert: unknown --source-format',
    argv: convert('crlf.jsonl', '--source-format', 'sharegpt'),
    expect: 'error',
    message: /source_format/,
  },
  { name: 'convert: missing file', argv: convert('missing.jsonl'), expect: 'error', message: /ENOENT.*missing\.jsonl/ },
  {
    name: 'convert: arguments not JSON',
    argv: convert('arguments_not_json.jsonl'),
    expect: 'skip-audit',
    message: /skipped: +\d+ \(invalid_arguments_json=/,
    skipReason: 'invalid_arguments_json',
  },
  {
    name: 'convert: tools in an unknown shape',
    argv: convert('tools_unknown_shape.jsonl'),
    expect: 'skip-audit',
    message: /malformed_trajectory=1/,
    skipReason: 'malformed_trajectory',
  },
  {
    name: 'convert: second row another shape',
    argv: convert('mixed_shapes.jsonl'),
    expect: 'skip-audit',
    message: /malformed_trajectory=1/,
    skipReason: 'malformed_trajectory',
  },
  { name: 'convert: CRLF line ends', argv: convert('crlf.jsonl'), expect: 'success', message: /trajectories read: +2/ },
  { name: 'convert: BOM', argv: convert('bom.jsonl'), expect: 'success', message: /trajectories read: +\d/ },
  // Known gap: convert's reader decodes leniently, so bad bytes become U+FFFD instead of an error.
  {
    name: 'convert: invalid UTF-8',
    argv: convert('invalid_utf8.jsonl'),
    expect: 'error',
    message: /invalid_utf8\.jsonl:\d+: invalid UTF-8/,
  },
  {
    name: 'convert: empty file',
    argv: convert('empty.jsonl'),
    expect: 'error',
    message: /empty\.jsonl: no rows \(the file is empty or blank\)/,
  },
  {
    name: 'validate: invalid JSON line',
    argv: ['validate', '--path', '{corpus}/validate/invalid_json.jsonl'],
    expect: 'error',
    message: /validation failed: line 1: invalid JSON/,
  },
  {
    name: 'validate: row is an array',
    argv: ['validate', '--path', '{corpus}/validate/row_is_array.jsonl'],
    expect: 'error',
    message: /validation failed: line 1: row must be an object/,
  },
  {
    name: 'validate: missing file',
    argv: ['validate', '--path', '{corpus}/validate/missing.jsonl'],
    expect: 'error',
    message: /validation failed: ENOENT.*missing\.jsonl/,
  },
  {
    name: 'profile: missing rollouts file',
    argv: [
      'profile',
      '--materialized-inputs',
      '{corpus}/input/good_quirks.jsonl',
      '--rollouts',
      '{corpus}/profile/missing.jsonl',
    ],
    expect: 'error',
    message: /--rollouts: file not found: .*missing\.jsonl/,
  },
  {
    name: 'profile: materialized inputs not materialized',
    argv: [
      'profile',
      '--materialized-inputs',
      '{corpus}/input/row_is_array.jsonl',
      '--rollouts',
      '{corpus}/convert/crlf.jsonl',
    ],
    expect: 'error',
    message: /row_is_array\.jsonl:1: /,
  },
];
