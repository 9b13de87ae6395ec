// The files the validator bench (validator.ts) times both validators on: short single-turn travel
// pivots made up here, and NeMo Gym's own tool-use example rows from the installed 0.4.0 package,
// each written to some 150 MB.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const words = [
  'weather',
  'flight',
  'refund',
  'order',
  'tomorrow',
  'hotel',
  'budget',
  'invoice',
  'receipt',
  'window',
  'seat',
  'lounge',
  'transfer',
  'taxi',
  'museum',
  'dinner',
];
/** Mostly ASCII with the odd accented name, as English tool-use data is: one row in five has one. */
const place = (index: number) => (index % 5 === 0 ? 'Zürich' : 'Boston');
const text = (seed: number, count: number) =>
  Array.from({ length: count }, (_, k) => words[(seed * 7 + k * 3) % words.length]).join(' ');

function tool(index: number): Record<string, unknown> {
  return {
    type: 'function',
    name: `tool_${index}`,
    description: text(index + 1, 6),
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: text(index, 4) } },
      required: ['query'],
    },
    strict: false,
  };
}

function provenance(index: number): Record<string, unknown> {
  return {
    source_task_index: index,
    rollout_index: index % 8,
    reward: 1.0,
    pivot_index: index % 5,
    uuid: `uuid-${index}`,
  };
}

/** One user turn, a handful of tools, the next call or a message: what most pivot rows look like. */
function shortRow(index: number): string {
  const isMessage = index % 10 === 0;
  return JSON.stringify({
    responses_create_params: {
      input: [
        { role: 'system', content: 'You are a helpful travel agent.' },
        { role: 'user', content: `${text(index, 14)} in ${place(index)} #${index}` },
      ],
      tools: [0, 1, 2, 3].map(tool),
      tool_choice: 'auto',
      parallel_tool_calls: false,
      temperature: 0.7,
    },
    expected_action: isMessage
      ? { type: 'message', content: text(index, 9) }
      : {
          type: 'function_call',
          name: `tool_${index % 4}`,
          arguments: JSON.stringify({ query: text(index, 3), limit: index % 31, ratio: 0.25 }),
        },
    agent_ref: { type: 'responses_api_agents', name: `bench_agent_${index % 3}` },
    provenance: provenance(index),
  });
}

const EXAMPLE_ROWS = 'resources_servers/single_step_tool_use_with_argument_comparison/data/example.jsonl';

/** Drops every null object member: the optional request fields the example leaves unset. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== null)
      .map(([key, member]) => [key, withoutNulls(member)]),
  );
}

/** NeMo Gym's own tool-use pivots (its single_step_tool_use_with_argument_comparison example, about
 * 28 KiB a row: a long policy prompt, a conversation and a dozen tools), taken from the installed
 * 0.4.0 package, null optionals removed, with the agent_ref and provenance a mined pivot carries. */
async function exampleRows(python: string): Promise<(index: number) => string> {
  const { stdout } = await run(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']);
  const lines = await readFile(path.join(stdout.trim(), EXAMPLE_ROWS), 'utf8');
  const rows = lines
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => withoutNulls(JSON.parse(line)) as Record<string, unknown>);
  return (index) =>
    JSON.stringify({
      ...rows[index % rows.length],
      agent_ref: { type: 'responses_api_agents', name: 'single_step_tool_use_with_argument_comparison_simple_agent' },
      provenance: provenance(index),
    });
}

/** Both files about 150 MB, as issue 12 sized them: a whole-process figure on a smaller file is more
 * of start-up (Node's, and V8 optimizing the scan) than of validating. */
export const shapes = async (python: string) => [
  { name: 'short single-turn travel pivots', rows: 90_000, row: shortRow },
  {
    name: 'NeMo Gym single_step_tool_use_with_argument_comparison pivots, repeated',
    rows: 5_500,
    row: await exampleRows(python),
  },
];

export async function writeRows(file: string, rows: number, row: (index: number) => string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < rows; i++) {
    if (!out.write(row(i) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
