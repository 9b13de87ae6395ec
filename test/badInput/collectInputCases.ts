import type { PipelineCase } from './cases';

// Bad collect input files: each names the file, the line and what is wrong with the row.

export const collectInputCases: PipelineCase[] = [
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
];
