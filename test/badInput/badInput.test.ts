import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { ApplicationFailure, type TemporalFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NON_RETRYABLE_ERROR_TYPES } from '../../contracts/errors';
import type { PivotMiningResult } from '../../contracts/payloads';
import { startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';
import { pipelineCases, type Outcome, type PipelineCase } from './cases';
import { cliCases, type CliCase } from './cliCases';

// Every case of the bad-input corpus through the entry point it concerns: pipeline cases on a real
// Temporal dev server served by ONE worker, which must still complete a good run afterwards; CLI
// cases as child processes. Prints the case → outcome table.

const repoRoot = path.resolve(__dirname, '../..');
const corpusDir = path.join(__dirname, 'corpus');
const TASK_QUEUE = 'pivot-mining-bad-input';
const HUGE_LINE_BYTES = 20 * 1024 * 1024;

let env: TestWorkflowEnvironment;
let stack: WorkerTestEnv | undefined;
let baseDir: string;
let outsideDir: string;
const table: { entry: string; name: string; expected: Outcome; actual: string; message: string }[] = [];

before(async () => {
  // The worker base dir holds the corpus, so config paths resolve inside it as in production.
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-bad-input-'));
  cpSync(corpusDir, baseDir, { recursive: true });
  const task = '{"responses_create_params":{"input":[{"role":"user","content":"hi"}]}}\n';
  // A link inside the artifacts root that leads out of the base dir: pool.dir through it must be refused.
  outsideDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-outside-'));
  mkdirSync(path.join(baseDir, 'artifacts'), { recursive: true });
  symlinkSync(outsideDir, path.join(baseDir, 'artifacts', 'linked_pool'));
  writeFileSync(
    path.join(baseDir, 'input/huge_line.jsonl'),
    `${task}{"task_id":"huge","blob":"${'x'.repeat(HUGE_LINE_BYTES)}"}\n`,
  );
  stack = await startWorkerTestEnv(TASK_QUEUE, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: undefined,
  });
  env = stack.env;
});

after(async () => {
  await stack?.stop();
  rmSync(baseDir, { recursive: true, force: true });
  assert.deepEqual(readdirSync(outsideDir), [], 'nothing may be written through the symlink that leads out');
  rmSync(outsideDir, { recursive: true, force: true });
  console.log(formatTable());
});

function formatTable(): string {
  const rows = table.map(
    (r) =>
      `| ${r.entry} | ${r.name} | ${r.expected} | ${r.actual} | ${r.message.split(baseDir).join('<base>').split('|').join('\\|').slice(0, 160)} |`,
  );
  return ['| entry point | case | expected | actual | message |', '|---|---|---|---|---|', ...rows].join('\n');
}

function workflowInput(c: PipelineCase, index: number): Record<string, unknown> {
  if (!('collect_input' in c.input)) return c.input;
  const config = readFileSync(path.join(baseDir, 'config/good.yaml'), 'utf8').replace(
    'input/good_quirks.jsonl',
    c.input.collect_input,
  );
  const configPath = `config/generated_${index}.yaml`;
  writeFileSync(path.join(baseDir, configPath), config);
  return { config_path: configPath };
}

/** The innermost ApplicationFailure of a workflow failure (parent → child → activity → application). */
function applicationFailure(err: unknown): ApplicationFailure | undefined {
  let found: ApplicationFailure | undefined;
  for (let e = err as (Error & { cause?: unknown }) | undefined; e; e = e.cause as typeof e) {
    if (e instanceof ApplicationFailure) found = e;
  }
  return found;
}

/** The highest activity attempt in a workflow's history: 1 means no bad input was retried. */
async function maxActivityAttempt(workflowId: string): Promise<number> {
  let max = 0;
  try {
    const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
    for (const event of history.events ?? [])
      max = Math.max(max, event.activityTaskStartedEventAttributes?.attempt ?? 0);
  } catch {
    return 0;
  }
  return max;
}

async function runPipelineCase(c: PipelineCase, index: number): Promise<void> {
  const workflowId = `bad-input-${index}`;
  const handle = await env.client.workflow.start(c.workflow ?? 'pivotMiningWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [workflowInput(c, index)],
  });
  const outcome = await handle.result().then(
    () => ({ actual: 'success', message: '' }),
    (err: unknown) => {
      const failure = applicationFailure(err);
      return {
        actual: failure ? `error (${failure.type})` : 'error (no ApplicationFailure)',
        message: failure?.message ?? String(err),
        failure,
      };
    },
  );
  table.push({ entry: 'pipeline', name: c.name, expected: c.expect, ...outcome });
  assert.ok('failure' in outcome && outcome.failure, `${c.name}: expected a failed workflow, got ${outcome.actual}`);
  const failure = outcome.failure as TemporalFailure & ApplicationFailure;
  assert.ok(
    NON_RETRYABLE_ERROR_TYPES.includes(failure.type ?? ''),
    `${c.name}: failure type ${failure.type} must be a non-retryable error type`,
  );
  assert.match(failure.message, c.message, c.name);
  assert.doesNotMatch(failure.message, /\n\s+at /, `${c.name}: message must not be a stack trace`);
  assert.ok(failure.message.length < 2000, `${c.name}: message must stay short (${failure.message.length} chars)`);
  for (const id of [workflowId, `${workflowId}/collect`]) {
    assert.ok((await maxActivityAttempt(id)) <= 1, `${c.name}: bad input was retried in ${id}`);
  }
}

const execFileAsync = promisify(execFile);

async function runCli(c: CliCase, index: number): Promise<void> {
  const out = path.join(baseDir, 'cli-out', String(index));
  const argv = c.argv.map((a) => a.replace('{corpus}', baseDir).replace('{out}', out));
  const result = await execFileAsync(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), ...argv], {
    cwd: repoRoot,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: err.code ?? -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    }),
  );
  const skipped = path.join(out, 'candidates_skipped.jsonl');
  const skipAudit = c.skipReason !== undefined && existsSync(skipped) ? readFileSync(skipped, 'utf8') : '';
  const actual =
    result.code !== 0
      ? `error (exit ${result.code})`
      : skipAudit.includes(`"${c.skipReason}"`)
        ? 'skip-audit'
        : 'success';
  const message =
    (result.code !== 0 ? result.stderr : result.stdout)
      .trim()
      .split('\n')
      .find((l) => c.message.test(l)) ??
    (result.code !== 0 ? result.stderr : result.stdout).trim().split('\n')[0] ??
    '';
  table.push({ entry: argv[0]!, name: c.name, expected: c.expect, actual, message });
  assert.equal(actual.split(' ')[0], c.expect, `${c.name}: ${result.stderr || result.stdout}`);
  assert.match(c.expect === 'error' ? result.stderr : result.stdout, c.message, c.name);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `${c.name}: stderr must not be a stack trace`);
}

/** Runs `fn` over `items` with at most `width` at a time (the machine has two cores). */
async function pool<T>(
  items: T[],
  width: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const results: PromiseSettledResult<void>[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!, i).then(
          (value) => ({ status: 'fulfilled' as const, value }),
          (reason: unknown) => ({ status: 'rejected' as const, reason }),
        );
      }
    }),
  );
  return results;
}

function assertAll(results: PromiseSettledResult<void>[]): void {
  const failures = results
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => String(r.reason));
  assert.deepEqual(failures, []);
}

test(
  'pipeline: every bad input, config and workflow input fails fast with file:line and reason',
  { timeout: 300_000 },
  async () => {
    assertAll(await pool(pipelineCases, 6, runPipelineCase));
  },
);

test(
  'pipeline: the same worker then completes a run on a valid input with BOM, CRLF, duplicate rows and no final newline',
  { timeout: 300_000 },
  async () => {
    const handle = await env.client.workflow.start('pivotMiningWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: 'bad-input-good-run',
      args: [{ config_path: 'config/good.yaml', run_id: 'good' }],
    });
    const result = (await handle.result()) as PivotMiningResult;
    table.push({
      entry: 'pipeline',
      name: 'valid quirks: BOM + CRLF + duplicate task rows + blank line + no final newline',
      expected: 'success',
      actual: 'success',
      message: `published ${result.counts.published}`,
    });
    assert.equal(stack!.worker.getState(), 'RUNNING');
    // Six rows, two of them repeats of earlier lines: four tasks, each duplicate continuing its task's rollouts.
    assert.equal(result.counts.tasks, 4);
    assert.equal(result.counts.rollouts, 12);
    assert.equal(path.relative(path.join(baseDir, 'artifacts/runs'), result.runDir), 'good');
    assert.ok(existsSync(result.pivotsPath));
  },
);

test(
  'CLI: convert, validate and profile report bad input in one line, or audit or accept it',
  { timeout: 300_000 },
  async () => {
    assertAll(await pool(cliCases, 3, runCli));
  },
);
