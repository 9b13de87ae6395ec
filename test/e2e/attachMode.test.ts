import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import YAML from 'yaml';
import { startEmbeddedStack } from '../../servers/embeddedStack';
import { runPivotMining, startWorkerTestEnv, type WorkerTestEnv } from '../helpers/temporal';

// "Real servers are one config line away": the same stack reached as external servers, found through
// a NeMo Gym head server, with local profiling over the Chat Completions API instead of Responses,
// publishes the same dataset as the embedded default.

const repoRoot = path.resolve(__dirname, '../..');
const TASK_QUEUE = 'pivot-mining-attach-test';
let workerEnv: WorkerTestEnv | undefined;
let env: TestWorkflowEnvironment;
let baseDir: string;
let stack: Awaited<ReturnType<typeof startEmbeddedStack>>;

before(async () => {
  baseDir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-attach-'));
  workerEnv = await startWorkerTestEnv(TASK_QUEUE, {
    PIVOT_MINER_BASE_DIR: baseDir,
    PIVOT_MINER_ARTIFACTS_ROOT: path.join(baseDir, 'artifacts'),
  });
  env = workerEnv.env;
  stack = await startEmbeddedStack({ seed: 7, log: () => undefined });
});

after(async () => {
  await workerEnv?.stop();
  await stack?.close();
  rmSync(baseDir, { recursive: true, force: true });
});

function writeConfig(name: string, edit: (config: Record<string, any>) => void): string {
  const config = YAML.parse(readFileSync(path.join(repoRoot, 'configs/demo.yaml'), 'utf8')) as Record<string, any>;
  config.collect.input_jsonl = 'demo_tasks.jsonl';
  edit(config);
  writeFileSync(path.join(baseDir, `${name}.yaml`), YAML.stringify(config));
  return `${name}.yaml`;
}

const run = (runId: string, configPath: string) =>
  runPivotMining(env.client, { taskQueue: TASK_QUEUE, configPath, runId });

test(
  'attach via a NeMo Gym head server with Chat Completions local profiling = embedded Responses run',
  { timeout: 600_000 },
  async () => {
    copyFileSync(path.join(repoRoot, 'configs/demo_tasks.jsonl'), path.join(baseDir, 'demo_tasks.jsonl'));
    const embedded = await run(
      'embedded',
      writeConfig('embedded', () => undefined),
    );
    const attached = await run(
      'attached',
      writeConfig('attached', (config) => {
        config.servers = { mode: 'attach', head_url: stack.urls.head };
        config.local_profile.model = { api: 'chat_completions' };
      }),
    );
    assert.equal(readFileSync(attached.pivotsPath, 'utf8'), readFileSync(embedded.pivotsPath, 'utf8'));
    assert.deepEqual(attached.counts, embedded.counts);
    // The local-profile samples really went through /v1/chat/completions and were translated back.
    const sample = JSON.parse(readFileSync(path.join(attached.runDir, 'local_profile.jsonl'), 'utf8').split('\n')[0]!);
    assert.equal(sample.response.object, 'response');
    assert.ok(Array.isArray(sample.response.output) && sample.response.output.length > 0);
  },
);

test('attach mode names the missing server instead of retrying forever', { timeout: 120_000 }, async () => {
  const configPath = writeConfig('no-agent', (config) => {
    config.servers = { mode: 'attach', head_url: stack.urls.head };
    config.collect.agent_name = 'no_such_agent';
  });
  await assert.rejects(run('no-agent', configPath), (err: Error & { cause?: Error & { cause?: Error } }) => {
    // WorkflowFailedError → ActivityFailure (ensureServers) → the non-retryable ApplicationFailure.
    assert.match(String(err.cause?.cause?.message), /cannot find agent "no_such_agent"/);
    return true;
  });
});
