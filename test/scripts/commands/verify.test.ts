import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { toolCallComparatorConfigSchema, verifyResponse, type VerifierResponse } from '../../../gym/verifier';
import { DEFAULT_VERIFY_SERVER_PORT } from '../../../scripts/commands/verify';
import { freePort } from '../../../scripts/lib/net';
import { loadVerifierConfigFromGymYaml } from '../../../servers/verifierServer';
import { fixturesDir } from '../../helpers/fixtures';
import { readJsonl } from '../../gym/convert/helpers';

const repoRoot = path.resolve(__dirname, '../../..');
const cliPath = path.join(repoRoot, 'bin/pivot-miner.js');
const pivotDir = path.join(fixturesDir, 'gym', 'single_step_tool_use_with_argument_comparison');

interface RunningCli {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
}

/** Starts `pivot-miner verify-server` and waits for the URL it prints. */
async function startCli(args: string[]): Promise<RunningCli> {
  const child = spawn(process.execPath, [cliPath, 'verify-server', ...args], { cwd: repoRoot });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /^url\s+(\S+)$/m.exec(stdout);
    if (match) return { child, url: match[1]!, stdout: () => stdout };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`verify-server did not start (exit ${child.exitCode}): ${stderr}${stdout}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stop(cli: RunningCli): Promise<void> {
  const exited = once(cli.child, 'exit');
  cli.child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(code, 0, 'SIGTERM stops the server cleanly');
}

async function verify(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

test('--help says what the server is and which NeMo Gym it follows', () => {
  const help = spawnSync(process.execPath, [cliPath, 'verify-server', '--help'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(help.status, 0, help.stderr);
  for (const phrase of [
    'NeMo Gym-compatible resources server',
    'POST /verify',
    'single_step_tool_use_with_argument_comparison',
    'built-in',
    '07d6b0d',
    '0.4.0',
    '--port',
    `(default: ${DEFAULT_VERIFY_SERVER_PORT})`,
    '--config',
  ]) {
    assert.ok(help.stdout.includes(phrase), `help mentions ${phrase}`);
  }
});

test('started through the CLI on a free port, POST /verify gives the rewards NeMo Gym recorded', async () => {
  const port = await freePort();
  const cli = await startCli(['--host', '127.0.0.1', '--port', String(port)]);
  try {
    assert.equal(cli.url, `http://127.0.0.1:${port}`);
    assert.match(cli.stdout(), new RegExp(`POST http://127\\.0\\.0\\.1:${port}/verify`));
    const rollouts = readJsonl(path.join(pivotDir, 'example_rollouts.jsonl'));
    assert.deepEqual(new Set(rollouts.map((r) => r.reward)), new Set([0, 1]), 'both verdicts are exercised');
    for (const rollout of rollouts) {
      const { responses_create_params, expected_action, response } = rollout;
      const { status, json } = await verify(cli.url, { responses_create_params, expected_action, response });
      assert.equal(status, 200);
      assert.equal(json.reward, rollout.reward);
      assert.equal(json.category, rollout.category);
    }
    const bad = await verify(cli.url, { expected_action: { type: 'message', content: 'x' } });
    assert.equal(bad.status, 422);
  } finally {
    await stop(cli);
  }
});

test('--config takes tool_call_comparator_config from a NeMo Gym config, and port 0 prints the port taken', async () => {
  const yamlPath = path.join(pivotDir, 'swe_pivot_single_step_tool_use_with_argument_comparison.yaml');
  const fromYaml = loadVerifierConfigFromGymYaml(readFileSync(yamlPath, 'utf8'));
  const expected_action = {
    type: 'function_call' as const,
    name: 'search',
    arguments: JSON.stringify({ query: 'cheap flights from oslo to rome in may' }),
  };
  const response: VerifierResponse = {
    output: [
      {
        type: 'function_call',
        name: 'search',
        arguments: JSON.stringify({ query: 'hotels in paris' }),
        call_id: 'c1',
        id: 'c1',
        status: 'completed',
      },
    ],
  };
  const withYaml = verifyResponse(expected_action, response, fromYaml).reward;
  const withDefault = verifyResponse(
    expected_action,
    response,
    toolCallComparatorConfigSchema.parse({ word_count_similarity_threshold: 0.1 }),
  ).reward;
  assert.notEqual(withYaml, withDefault, 'the case tells the two configs apart');

  const cli = await startCli(['--port', '0', '--config', yamlPath]);
  try {
    assert.match(cli.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(cli.url, 'http://127.0.0.1:0');
    const body = {
      responses_create_params: { input: [{ role: 'user', content: 'find me a hotel' }], tools: [] },
      expected_action,
      response,
    };
    const { status, json } = await verify(cli.url, body);
    assert.equal(status, 200);
    assert.equal(json.reward, withYaml);
  } finally {
    await stop(cli);
  }
});

test('bad usage exits non-zero with a message that says what to fix', async () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [cliPath, 'verify-server', ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 30_000,
    });
  const missing = run(['--port', '0', '--config', '/nonexistent/gym.yaml']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /cannot read --config \/nonexistent\/gym\.yaml/);
  const several = run(['--port', '0', '--server-name', 'x']);
  assert.equal(several.status, 1);
  assert.match(several.stderr, /--server-name .* pass --config too/);
  assert.notEqual(run(['--port', 'eighty']).status, 0);

  const taken = await startCli(['--port', '0']);
  try {
    const clash = run(['--port', new URL(taken.url).port]);
    assert.equal(clash.status, 1);
    assert.match(clash.stderr, /already in use/);
  } finally {
    await stop(taken);
  }
});
