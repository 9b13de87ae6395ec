import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { fixturesDir } from '../../helpers/fixtures';
import { validatePivotDataset } from '../../../gym/validator';
import { defaultThreads, validateOptionsFromArgv } from '../../../scripts/commands/validate';

const repoRoot = path.resolve(__dirname, '../../..');
const casesDir = path.join(fixturesDir, 'validator');
const configsDir = path.join(__dirname, 'validate');
const cases = z
  .array(
    z.object({
      name: z.string(),
      args: z.array(z.string()),
      file: z.string(),
      exit_code: z.number(),
      stdout: z.string(),
      stderr: z.string(),
    }),
  )
  .parse(JSON.parse(readFileSync(path.join(casesDir, 'cases.json'), 'utf8')));

function runCli(args: readonly string[]) {
  const result = spawnSync(process.execPath, ['bin/pivot-miner.js', 'validate', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return { exitCode: result.status, stdout: result.stdout, stderr: result.stderr };
}

function caseByName(name: string) {
  const found = cases.find((c) => c.name === name);
  assert.ok(found, `case ${name} exists`);
  return found;
}

const withoutPath = (text: string, filePath: string, file: string) => text.split(filePath).join(file);

test('commander parsing of every case argv gives the reference results', async () => {
  for (const c of cases) {
    const filePath = path.join(casesDir, c.file);
    const result = await validatePivotDataset(validateOptionsFromArgv(['--path', filePath, ...c.args]));
    assert.deepEqual(
      { exitCode: result.exitCode, stdout: result.stdout, stderr: withoutPath(result.stderr, filePath, c.file) },
      { exitCode: c.exit_code, stdout: c.stdout, stderr: c.stderr },
      c.name,
    );
  }
});

test('repeated options accumulate in order and the last single value wins', () => {
  const options = validateOptionsFromArgv([
    '--path=f.jsonl',
    '--require-field',
    'b',
    '--agent-ref',
    'x',
    '--require-any-field',
    ' a ,\tb,',
    '--require-field=a',
    '--agent-ref=',
    '--require-any-field',
    ',',
  ]);
  assert.deepEqual(options.requireFields, ['b', 'a']);
  assert.deepEqual(options.requireAnyFields, [['a', 'b'], []]);
  assert.equal(options.agentRef, '');
  assert.equal(options.checkToolNames, true);
  assert.equal(validateOptionsFromArgv(['--path', 'f', '--no-check-tool-names']).checkToolNames, false);
});

for (const name of [
  'valid_function_call_rows',
  'valid_agent_ref_equals_form',
  'valid_provenance_with_required_fields',
  'error_require_field_not_stripped',
  'error_agent_ref_mismatch_later_row',
  'error_agent_ref_empty_expected',
  'error_empty_file',
  'valid_combined_flags',
]) {
  test(`CLI reproduces case ${name}`, () => {
    const c = caseByName(name);
    const filePath = path.join(casesDir, c.file);
    const result = runCli(['--path', filePath, ...c.args]);
    assert.deepEqual(
      { exitCode: result.exitCode, stdout: result.stdout, stderr: withoutPath(result.stderr, filePath, c.file) },
      { exitCode: c.exit_code, stdout: c.stdout, stderr: c.stderr },
    );
  });
}

const retailRows = path.join(casesDir, caseByName('valid_function_call_rows').file);

test('CLI --config passes when every agent_ref is an agent of the Gym config', () => {
  const result = runCli(['--path', retailRows, '--config', path.join(configsDir, 'retail_orders.yaml')]);
  assert.equal(result.stderr, '');
  assert.equal(result.exitCode, 0);
  assert.equal(result.stdout, caseByName('valid_function_call_rows').stdout);
});

test('CLI --config fails when the agent routes to an undefined resources server', () => {
  const config = path.join(configsDir, 'retail_orders_missing_server.yaml');
  const result = runCli(['--path', retailRows, '--config', config]);
  assert.equal(result.exitCode, 1);
  assert.equal(result.stdout, '');
  assert.equal(
    result.stderr,
    `validation failed: line 1: agent 'retail_orders_agent' uses resources server 'retail_orders_resource_server', which is not a resources_servers block in ${config}\n`,
  );
});

test('CLI --config fails on a row whose agent the config does not define', () => {
  const config = path.join(configsDir, 'retail_orders.yaml');
  const rows = path.join(casesDir, caseByName('valid_mixed_agents_and_actions').file);
  const result = runCli(['--path', rows, '--config', config]);
  assert.equal(result.exitCode, 1);
  assert.equal(
    result.stderr,
    `validation failed: line 1: agent_ref.name 'agent pivot' is not an agent defined in ${config} (agents: retail_orders_agent)\n`,
  );
});

test('CLI usage errors exit 2 like the reference argparse', () => {
  const result = runCli(['--path', retailRows, '--bogus']);
  assert.equal(result.exitCode, 2);
  assert.match(result.stderr, /unknown option '--bogus'/);
});

test('CLI with worker threads prints and exits as with one, on every case', () => {
  for (const c of cases) {
    const args = ['--path', path.join(casesDir, c.file), ...c.args];
    assert.deepEqual(runCli([...args, '--threads', '2']), runCli([...args, '--threads', '1']), c.name);
  }
});

test('CLI threads by default on a file of many MiB, with the first failure and metrics of one thread', () => {
  assert.equal(defaultThreads(retailRows), 1);
  const dir = mkdtempSync(path.join(tmpdir(), 'validate-threads-'));
  try {
    const rows = readFileSync(retailRows, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    // ~20 MiB: many 1 MiB read batches spread over the workers; failures in late batches only.
    const lines = Array.from({ length: 14_000 }, (_, i) => rows[i % rows.length] as string);
    const variants = {
      valid: lines,
      late_failures: lines.map((row, i) => (i === 11_111 ? '{"agent_ref": 1}' : i === 13_000 ? '{' : row)),
      last_line_invalid: [...lines, '[]'],
    };
    for (const [name, body] of Object.entries(variants)) {
      const file = path.join(dir, `${name}.jsonl`);
      writeFileSync(file, body.join('\n') + '\n');
      assert.ok(defaultThreads(file) > 1 || availableParallelism() === 1, name);
      const threaded = runCli(['--path', file]);
      assert.deepEqual(threaded, runCli(['--path', file, '--threads', '1']), name);
      assert.equal(threaded.exitCode === 0, name === 'valid', `${name}: ${threaded.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
