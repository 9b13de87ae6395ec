import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadsPythonJson, PythonJsonDecodeError } from '../../gym/pythonJson';
import { isBlank } from '../../gym/pythonJsonLexis';
import { pivotValidatorOptionsSchema, validatePivotDataset, type PivotValidatorOptions } from '../../gym/validator';
import { acceptLineFast, type LineOutcome } from '../../gym/validator/fastRows';
import { decodeLineBytes, JsonlFile } from '../../gym/validator/jsonlLines';
import { checkRow, pythonRowReader, type RowCheckOptions } from '../../gym/validator/rowChecks';
import { cases, casesDir, optionsFromArgs } from './validatorCases';
import { random } from '../helpers/random';

// The fast path (a strict-JSON scan that builds only what the checks read) may only ever accept:
// every line it accepts must be one the exact path (CPython's decoder) accepts with the same
// summary, and a line it declines goes to the exact path.

function rowOptions(options: PivotValidatorOptions): RowCheckOptions {
  const parsed = pivotValidatorOptionsSchema.parse(options);
  return {
    agentRef: parsed.agentRef,
    requireFields: parsed.requireFields,
    requireAnyFields: parsed.requireAnyFields,
    checkToolNames: parsed.checkToolNames,
  };
}

/** What the exact path alone makes of a line. */
function exactOutcome(
  bytes: Uint8Array,
  terminated: boolean,
  options: RowCheckOptions,
): LineOutcome | 'invalid utf-8' | 'rejected' {
  const text = decodeLineBytes(bytes, terminated);
  if (text === undefined) return 'invalid utf-8';
  if (isBlank(text)) return 'blank';
  let row;
  try {
    row = loadsPythonJson(text);
  } catch (error) {
    assert.ok(error instanceof PythonJsonDecodeError);
    return 'rejected';
  }
  const result = checkRow(row, options, pythonRowReader);
  return result.ok ? result.summary : 'rejected';
}

/** Compares the two paths on every line of a file; returns how many lines the fast path took. */
function compareLines(file: string, options: RowCheckOptions): { accepted: number; declined: number } {
  let accepted = 0;
  let declined = 0;
  const jsonl = new JsonlFile(file);
  let lineNumber = 0;
  try {
    jsonl.lines(0, jsonl.size, (line) => {
      lineNumber++;
      const fast = acceptLineFast(line, options);
      if (fast === undefined) {
        declined++;
        return;
      }
      accepted++;
      const bytes = line.buffer.subarray(line.start, line.end);
      assert.deepEqual(
        fast,
        exactOutcome(bytes, line.terminated, options),
        `${path.basename(file)} line ${lineNumber}: ${bytes.toString().slice(0, 2000)}`,
      );
    });
  } finally {
    jsonl.close();
  }
  return { accepted, declined };
}

test('on the recorded cases, every line the fast path takes is one the exact path takes alike', async () => {
  let accepted = 0;
  let declined = 0;
  for (const c of cases) {
    const file = path.join(casesDir, c.file);
    const counts = compareLines(file, rowOptions(optionsFromArgs(file, c.args)));
    accepted += counts.accepted;
    declined += counts.declined;
  }
  // Both paths are exercised: most rows go fast, the odd ones (NaN, BOM, bad rows) do not.
  assert.ok(accepted > 100 && declined > 40, JSON.stringify({ accepted, declined }));
});

/** JSON texts on which CPython and JSON.parse part ways, or the checks have something to say. */
const QUIRKY_VALUES = [
  'NaN',
  '-Infinity',
  '1e400',
  '12345678901234567890123',
  '1.0',
  '-0',
  '0.1',
  'null',
  'true',
  '"auto"',
  '""',
  '[]',
  '{}',
  '"\\ud800"',
  '"\\ud83d\\ude00"',
  '"\u00e9\u2028"',
  '{"2": 1, "10": 2}',
  '{"a": 1, "a": null}',
  '{"__proto__": 1}',
  `${'['.repeat(2001)}${']'.repeat(2001)}`,
  `${'['.repeat(30)}${']'.repeat(30)}`,
];

function generatedRow(next: () => number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const maybe = (p: number, text: string, otherwise = '') => (next() < p ? text : otherwise);
  const quirk = () => pick(QUIRKY_VALUES);
  const name = pick(['get_weather', 'book', '', 'caf\u00e9', '\\ud800x', 'toString']);
  const tools = [
    `{"type": "function", "name": ${JSON.stringify(name)}}`,
    `{"type": "function", "function": {"name": ${JSON.stringify(pick(['book', 'get_weather']))}}}`,
    maybe(
      0.3,
      `{"name": ""${maybe(0.5, `, "function": {"name": ${JSON.stringify(name)}}`)}}`,
      '{"type": "web_search"}',
    ),
    // Escaped keys spell the same names: the scanner compares keys on the bytes when it can.
    maybe(0.3, `{"n\\u0061me": ${JSON.stringify(name)}, "description": "d"}`, `{"function": {"na\\u006de": "book"}}`),
    maybe(0.2, quirk(), '7'),
  ];
  const args = pick([
    '{"city": "Paris"}',
    '{"x": NaN}',
    '{"a": 1, "a": 2}',
    '[1, 2]',
    '{',
    '',
    '12345678901234567890',
    quirk(),
    `${'['.repeat(2001)}1${']'.repeat(2001)}`,
  ]);
  const action = pick([
    `{"type": "function_call", "name": ${JSON.stringify(name)}, "arguments": ${JSON.stringify(args)}}`,
    `{"type": "function_call", "name": ${JSON.stringify(name)}, "arguments": ${JSON.stringify(args)}, "name": "book"}`,
    `{"type": "message", "content": ${pick(['"done"', '""', quirk()])}}`,
    `{"type": ${pick(['"function_call_batch"', quirk()])}}`,
    quirk(),
  ]);
  const params = [
    `"input": ${pick(['[{"role": "user", "content": "hi"}]', '[1, 2]', '[]', quirk()])}`,
    `"tools": [${tools.join(', ')}]`,
    maybe(0.5, `"tool_choice": ${pick(['"auto"', quirk()])}`),
    maybe(0.4, `"parallel_tool_calls": ${pick(['false', 'true', quirk()])}`),
    maybe(0.3, `"metadata": ${pick(['{"k": "v"}', 'null', quirk()])}`),
    maybe(0.3, `"temperature": ${quirk()}`),
  ].filter((member) => member !== '');
  const members = [
    maybe(0.97, `"responses_create_params": {${params.join(', ')}}`),
    maybe(0.97, `"expected_action": ${action}`),
    maybe(
      0.97,
      `"agent_ref": ${pick(['{"type": "responses_api_agents", "name": "a_agent"}', '{"type": "responses_api_agents", "name": "b_agent"}', '{"type": "responses_api_agents", "name": ""}', quirk()])}`,
    ),
    maybe(0.7, `"provenance": {"uuid": ${pick(['"u-1"', 'null', quirk()])}, "task": {"id": ${quirk()}}}`),
    maybe(0.2, `"agent_ref": {"type": "responses_api_agents", "name": "a_agent"}`),
    maybe(0.1, `"\\u0061gent_ref": {"type": "responses_api_agents", "name": "b_agent"}`),
  ].filter((member) => member !== '');
  const whitespace = pick(['', ' ', '\t', '\r', '\u00a0', '\ufeff']);
  return `${whitespace}${pick(['{', '{ '])}${members.join(pick([', ', ',']))}}${maybe(0.05, ' x')}`;
}

async function withTempDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-fast-path-'));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const generatedOptions: PivotValidatorOptions[] = [
  { path: '' },
  {
    path: '',
    agentRef: 'a_agent',
    requireFields: ['provenance.uuid'],
    requireAnyFields: [['provenance.task.id', 'x']],
  },
  { path: '', checkToolNames: false, requireFields: ['provenance.task'] },
  // A required end that a longer required path then goes through, and the other way round.
  {
    path: '',
    requireFields: ['provenance', 'provenance.task.id'],
    requireAnyFields: [['provenance.uuid.x', 'provenance.uuid']],
  },
];

test('on generated rows, the fast path never accepts what the exact path rejects, nor summarises differently', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'rows.jsonl');
    const next = random(20261123);
    await writeFile(file, Array.from({ length: 3000 }, () => generatedRow(next)).join('\n'));
    let accepted = 0;
    let declined = 0;
    for (const options of generatedOptions) {
      const counts = compareLines(file, rowOptions({ ...options, path: file }));
      accepted += counts.accepted;
      declined += counts.declined;
    }
    assert.ok(accepted > 100 && declined > 1000, JSON.stringify({ accepted, declined }));
  });
});

test('worker threads give what one thread gives: the first failure across batches, or the same metrics', async () => {
  await withTempDir(async (dir) => {
    const next = random(7);
    const options = rowOptions({ path: 'rows.jsonl' });
    const valid: string[] = [];
    while (valid.length < 500) {
      const row = generatedRow(next);
      if (typeof exactOutcome(Buffer.from(row), false, options) === 'object') valid.push(row);
    }
    const bad = generatedRow(next);
    // Several read chunks (1 MiB each), a failure in a late chunk, and a second one after it.
    const rows = Array.from({ length: 12_000 }, (_, i) => valid[i % valid.length] as string);
    const variants = {
      valid: rows,
      late_failure: rows.map((row, i) => (i === 9321 ? '{"agent_ref": 1}' : i === 11_000 ? bad : row)),
      bad_utf8_last_line: [...rows, 'x'],
    };
    for (const [name, lines] of Object.entries(variants)) {
      const file = path.join(dir, `${name}.jsonl`);
      const body = Buffer.from(lines.join('\r\n'));
      await writeFile(
        file,
        name === 'bad_utf8_last_line' ? Buffer.concat([body.subarray(0, -1), Buffer.from([0xc3, 0x28])]) : body,
      );
      const one = await validatePivotDataset({ path: file, threads: 1 });
      const two = await validatePivotDataset({ path: file, threads: 2 });
      assert.deepEqual(two, one, name);
      assert.equal(one.exitCode === 0, name === 'valid', `${name}: ${one.stderr}`);
    }
  });
});
