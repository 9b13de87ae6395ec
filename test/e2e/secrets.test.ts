import assert from 'node:assert/strict';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { temporalBinary } from '../../scripts/lib/temporalCli';
import { spawnWorkerProcess, stopProcess } from '../../scripts/lib/workerProcess';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { runPivotMining, startTestTemporal } from '../helpers/temporal';

// The local-profile model's API key lives only in the worker's environment: it is sent to the model
// as a Bearer header, and appears nowhere in workflow histories, artifacts or worker logs.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-secrets-test';
const KEY_ENV = 'PIVOT_MINER_TEST_MODEL_KEY';
const secret = `sk-test-${randomUUID()}`;

let env: TestWorkflowEnvironment;
let stack: EmbeddedStack;
let recorder: Server;
let baseDir: string;
let worker: ChildProcess | undefined;
let workerLog = '';
const authorizations: (string | undefined)[] = [];

/** A pass-through in front of the simulator that records the Authorization header of every request. */
async function startRecordingProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks),
      })
        .then(async (upstream) => {
          res.writeHead(upstream.status, {
            'content-type': upstream.headers.get('content-type') ?? 'application/json',
          });
          res.end(Buffer.from(await upstream.arrayBuffer()));
        })
        .catch(() => {
          res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-secrets-'));
  stack = await startEmbeddedStack({ seed: 7 });
  recorder = await startRecordingProxy(stack.urls.model);
  const tasks = readFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), 'utf8')
    .split('\n')
    .slice(0, 6)
    .join('\n');
  writeFileSync(path.join(baseDir, 'tasks.jsonl'), `${tasks}\n`);
  writeFileSync(
    path.join(baseDir, 'secrets.yaml'),
    [
      'name: secrets',
      'seed: 7',
      'collect:',
      '  input_jsonl: tasks.jsonl',
      '  agent_name: demo_tool_agent',
      '  num_repeats: 2',
      'local_profile:',
      '  num_samples: 2',
      '  model:',
      `    url: http://127.0.0.1:${(recorder.address() as AddressInfo).port}`,
      `    api_key_env: ${KEY_ENV}`,
      '',
    ].join('\n'),
  );
  mkdirSync(path.join(baseDir, 'artifacts'));
  env = await startTestTemporal();
  worker = spawnWorkerProcess({
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
    baseDir,
    artifactsRoot: path.join(baseDir, 'artifacts'),
    env: { [KEY_ENV]: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout!.on('data', (d: Buffer) => (workerLog += d.toString()));
  worker.stderr!.on('data', (d: Buffer) => (workerLog += d.toString()));
});

after(async () => {
  if (worker) await stopProcess(worker);
  await env?.teardown();
  await new Promise((resolve) => recorder?.close(resolve));
  await stack?.close();
  rmSync(baseDir, { recursive: true, force: true });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : [p];
  });
}

/**
 * A workflow's history as exported by `temporal workflow show --output json`, with every payload
 * (base64 in that export) decoded next to it, so a search sees what the history really holds.
 */
function workflowHistoryText(workflowId: string): string {
  const json = execFileSync(
    temporalBinary(),
    ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', env.address],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  const decoded: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.length >= 8 && value.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(value))
        decoded.push(Buffer.from(value, 'base64').toString('utf8'));
    } else if (value && typeof value === 'object') {
      for (const v of Object.values(value)) walk(v);
    }
  };
  walk(JSON.parse(json));
  return [json, ...decoded].join('\n');
}

test('the model API key reaches the model as a Bearer header and nothing else', { timeout: 600_000 }, async () => {
  const workflowId = 'secrets-run';
  const result = await runPivotMining(env.client, {
    taskQueue: TASK_QUEUE,
    configPath: 'secrets.yaml',
    runId: 'secrets',
    workflowId,
  });
  assert.ok(result.counts.local_profile_rollouts! > 0, 'local profiling must have called the model');

  const profileCalls = authorizations.filter((a) => a !== undefined);
  assert.ok(profileCalls.length >= result.counts.local_profile_rollouts!, 'every local-profile request carried a key');
  assert.ok(profileCalls.every((a) => a === `Bearer ${secret}`));

  const histories = [workflowId, `${workflowId}/collect`, `${workflowId}/local_profile`].map((id) => ({
    id,
    json: workflowHistoryText(id),
  }));
  for (const { id, json } of histories) {
    assert.match(
      json,
      /WORKFLOW_EXECUTION_COMPLETED|WorkflowExecutionCompleted/,
      `${id}: the exported history is complete`,
    );
    assert.ok(!json.includes(secret), `${id}: the key is in the workflow history`);
  }
  // The decoded history does carry the config, naming the variable, so the search looked in the right place.
  assert.ok(histories[0]!.json.includes(`"api_key_env":"${KEY_ENV}"`));

  const artifacts = filesUnder(path.join(baseDir, 'artifacts'));
  assert.ok(artifacts.some((f) => f.endsWith('pivots.jsonl')));
  for (const file of artifacts) assert.ok(!readFileSync(file).includes(secret), `${file} contains the key`);

  assert.match(workerLog, /pivot-miner worker/);
  assert.ok(!workerLog.includes(secret), 'the worker log contains the key');
});
