import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validatePivotDataset } from '../../../gym/validator';
import { cases, casesDir, optionsFromArgs } from '../validatorCases';

const withoutPath = (text: string, filePath: string, file: string) => text.split(filePath).join(file);

test('every recorded reference case is reproduced', async () => {
  assert.equal(cases.length, 72);
  const failures: string[] = [];
  for (const c of cases) {
    const filePath = path.join(casesDir, c.file);
    const result = await validatePivotDataset(optionsFromArgs(filePath, c.args));
    const actual = {
      exit_code: result.exitCode,
      stdout: withoutPath(result.stdout, filePath, c.file),
      stderr: withoutPath(result.stderr, filePath, c.file),
    };
    const expected = { exit_code: c.exit_code, stdout: c.stdout, stderr: c.stderr };
    try {
      assert.deepEqual(actual, expected);
    } catch {
      failures.push(`${c.name}\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`);
    }
  }
  console.log(`validator cases: ${cases.length - failures.length}/${cases.length}`);
  assert.deepEqual(failures, []);
});

const validRow = (agent: string, tool = 'get_weather') =>
  JSON.stringify({
    responses_create_params: {
      input: [{ role: 'user', content: 'hi' }],
      tools: [{ type: 'function', name: tool }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: { type: 'function_call', name: tool, arguments: '{"city": "Paris"}' },
    agent_ref: { type: 'responses_api_agents', name: agent },
  });

async function withTempDir<T>(run: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-'));
  try {
    return await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a CR or CRLF split across reads still counts as one line break', async () => {
  await withTempDir(async (dir) => {
    const row = validRow('weather_agent');
    // The filler row is padded with spaces (JSON whitespace) so its terminator straddles 1 MiB,
    // the size of each read; the line after it is the one that must be blamed.
    const chunk = 1 << 20;
    for (const [terminator, offset] of [
      ['\r\n', 1],
      ['\r', 1],
      ['\r\n', 2],
      ['\r', 0],
    ] as const) {
      const filler = row + ' '.repeat(chunk - offset - row.length);
      const file = path.join(dir, 'rows.jsonl');
      await writeFile(file, `${filler}${terminator}${row}${terminator}[]${terminator}`);
      const result = await validatePivotDataset({ path: file });
      assert.equal(
        result.stderr,
        'validation failed: line 3: row must be an object\n',
        JSON.stringify({ terminator, offset }),
      );
    }
  });
});

test('a 100k-row file streams to the right metrics, letting the event loop turn as it goes', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'rows.jsonl');
    const row = validRow('weather_agent') + '\n';
    await writeFile(file, row.repeat(100_000));
    // A Temporal worker validates on its own thread: its other work must not wait for a whole file.
    let turns = 0;
    let checking = true;
    const turn = () => {
      if (!checking) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    const result = await validatePivotDataset({ path: file });
    checking = false;
    assert.equal(result.exitCode, 0);
    assert.match(result.stdout, /^rows: 100000\nagent_ref:\n {2}weather_agent: 100000\n/);
    assert.ok(turns > 5, `${turns} turns of the event loop`);
  });
});

test('gymConfigPath checks every agent_ref against the agents of a NeMo Gym config', async () => {
  await withTempDir(async (dir) => {
    const config = path.join(dir, 'gym.yaml');
    await writeFile(
      config,
      [
        'weather_resources_server:',
        '  resources_servers:',
        '    single_step_tool_use_with_argument_comparison: {entrypoint: app.py}',
        'weather_agent:',
        '  responses_api_agents:',
        '    tool_simulation_agent:',
        '      resources_server: {type: resources_servers, name: weather_resources_server}',
        'orphan_agent:',
        '  responses_api_agents:',
        '    tool_simulation_agent:',
        '      resources_server: {type: resources_servers, name: weather_agent}',
        '',
      ].join('\n'),
    );
    const rows = path.join(dir, 'rows.jsonl');
    const check = async (agents: string[]) => {
      await writeFile(rows, agents.map((agent) => validRow(agent) + '\n').join(''));
      return validatePivotDataset({ path: rows, gymConfigPath: config });
    };
    assert.equal((await check(['weather_agent', 'weather_agent'])).exitCode, 0);
    assert.equal(
      (await check(['weather_agent', 'travel_agent'])).stderr,
      `validation failed: line 2: agent_ref.name 'travel_agent' is not an agent defined in ${config} (agents: weather_agent, orphan_agent)\n`,
    );
    assert.equal(
      (await check(['orphan_agent'])).stderr,
      `validation failed: line 1: agent 'orphan_agent' uses resources server 'weather_agent', which is not a resources_servers block in ${config}\n`,
    );
    const missing = path.join(dir, 'missing.yaml');
    const unreadable = await validatePivotDataset({ path: rows, gymConfigPath: missing });
    assert.equal(unreadable.exitCode, 1);
    assert.match(unreadable.stderr, /^validation failed: cannot read Gym config .*missing\.yaml: ENOENT/);
  });
});

test('the reference checks still come first when a Gym config is given', async () => {
  await withTempDir(async (dir) => {
    const config = path.join(dir, 'gym.yaml');
    await writeFile(config, 'a_agent:\n  responses_api_agents:\n    x:\n      resources_server: {name: a_agent}\n');
    const rows = path.join(dir, 'rows.jsonl');
    await writeFile(rows, '{"agent_ref": {"type": "responses_api_agents", "name": "b_agent"}}\n');
    const result = await validatePivotDataset({ path: rows, gymConfigPath: config });
    assert.equal(result.stderr, "validation failed: line 1: missing required key 'responses_create_params'\n");
  });
});

test('bytes that are not UTF-8 fail on their own line instead of crashing', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'rows.jsonl');
    await writeFile(
      file,
      Buffer.concat([Buffer.from(validRow('a_agent') + '\n'), Buffer.from([0x22, 0xc3, 0x28, 0x22, 0x0a])]),
    );
    const result = await validatePivotDataset({ path: file });
    assert.deepEqual(result, { exitCode: 1, stdout: '', stderr: 'validation failed: line 2: not valid UTF-8\n' });
  });
});

test('averages round exact ties to even like Python, not upward like toFixed', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'rows.jsonl');
    const twoInputs = validRow('a_agent').replace('"input":[', '"input":[{"role":"user","content":"again"},');
    await writeFile(file, [twoInputs, ...Array.from({ length: 7 }, () => validRow('a_agent'))].join('\n'));
    const result = await validatePivotDataset({ path: file });
    assert.match(result.stdout, /\navg_input_items: 1\.12\n/);
  });
});

test('function_call_batch pivots: refused as the reference refuses them, accepted with batchActions', async () => {
  const tool = (name: string) => ({ type: 'function', name, parameters: { type: 'object' } });
  const call = (name: string, args: string) => ({ type: 'function_call', name, arguments: args });
  const row = (calls: unknown[]) => ({
    responses_create_params: {
      input: [{ role: 'user', content: 'weather in Paris and Rome?' }],
      tools: [tool('get_weather')],
    },
    expected_action: { type: 'function_call_batch', calls },
    agent_ref: { type: 'responses_api_agents', name: 'a' },
  });
  const message = {
    ...row([]),
    expected_action: { type: 'message', content: 'hi' },
  };
  const good = row([call('get_weather', '{"city": "Paris"}'), call('get_weather', '{"city": "Rome"}')]);
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'pivots.jsonl');
    const check = async (rows: unknown[], batchActions?: boolean) => {
      await writeFile(file, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      return validatePivotDataset({ path: file, batchActions });
    };
    const refused = await check([good]);
    assert.equal(refused.exitCode, 1);
    assert.match(refused.stderr, /line 1: unsupported expected_action type 'function_call_batch'/);

    const accepted = await check([good, message], true);
    assert.equal(accepted.exitCode, 0, accepted.stderr);
    assert.match(accepted.stdout, /expected_tool:\n {2}get_weather: 2\n/);
    assert.match(
      accepted.stdout,
      /function_call: 0 \(0\.00%\)\n {2}message: 1 \(50\.00%\)\n {2}function_call_batch: 1 \(50\.00%\)\n/,
    );
    const withoutBatches = await check([message], true);
    assert.doesNotMatch(withoutBatches.stdout, /function_call_batch/, 'the reference printout when no row is a batch');

    for (const [calls, reason] of [
      [[], /line 1: function_call_batch\.calls must be a non-empty list/],
      [
        [call('get_weather', '{bad')],
        /line 1: function_call_batch\.calls\[0\]: function_call\.arguments is not valid JSON/,
      ],
      [
        [call('get_weather', '{}'), call('book_flight', '{}')],
        /calls\[1\]: expected_action uses tools absent .*'book_flight'/,
      ],
      [[{ type: 'message', content: 'x' }], /calls\[0\] must be a function_call object/],
    ] as const) {
      const result = await check([row([...calls])], true);
      assert.equal(result.exitCode, 1);
      assert.match(result.stderr, reason);
    }
  });
});
