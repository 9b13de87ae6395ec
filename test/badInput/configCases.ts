import type { PipelineCase } from './cases';

// Bad pipeline configs: each names the config file, the line and the key.

export const configCases: PipelineCase[] = [
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
];
