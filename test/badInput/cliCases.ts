import type { Outcome } from './cases';

// Bad input to the CLI's convert, validate and profile commands.

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
