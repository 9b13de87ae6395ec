import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { computeAggregateMetrics } from '../../gym/aggregateMetrics';
import { orjsonCanonicalObject } from '../../gym/orjsonCanonical';
import { startHeadServer } from '../../servers/head';
import type { RunningServer } from '../../servers/http';
import { ensureNemoGym, runNemoGymCommand, type NemoGymInstall } from '../../scripts/lib/nemoGym';
import { collectPlan, materialize, merge, outPrefixOf, runChunks } from '../activities/fakeGym';

// The files collect writes against `ng_collect_rollouts` itself, on inputs and agent answers whose
// numbers JSON.parse would change: floats that look integral (`1.0`), a float with a trailing zero,
// floats orjson writes with an exponent, ints beyond 2^53 and beyond 64 bits, integer-like keys.
// Both ask the same agent (answering fixed bytes) through the same head server.

const AGENT = 'bytes_agent';
const TASKS = [
  '{"responses_create_params":{"input":[{"role":"user","content":"h\\u00e9llo"}],"temperature":1.0,"top_p":0.50},"x":1.0,"tiny":1e-05,"big":12345678901234567890,"huge":123456789012345678901,"keys":{"2":"b","1":"a"}}',
  '{"responses_create_params":{"input":"plain"},"n":3,"ratio":0.25}',
];
const ANSWER =
  '{"response":{"output":[{"type":"message","role":"assistant","content":"done"}],"created_at":1700000000.0,"temperature":1.0},' +
  '"reward":1.0,"score":0.50,"lr":1e-05,"tiny":1e-6,"count":3,"ids":{"10":1,"2":2},"neg":-0.0,"exp":2E3}';

// The second task's answer is already in orjson's form, so our collect writes it by splicing the row's
// keys into its bytes (gym/rolloutSplice.ts) rather than by decoding it: both paths meet NeMo Gym here.
const SPLICED_ANSWER =
  '{"response":{"output":[{"type":"message","role":"assistant","content":"d\u00f6ne \\u0001\\n"}],"created_at":1700000000.0,"usage":{"input_tokens":3}},' +
  '"reward":1.0,"score":0.5,"tiny":1e-6,"ids":{"10":1,"2":2},"neg":-0.0,"big":123456789012345678}';

let install: NemoGymInstall;
let agent: Server;
let head: RunningServer;
const posted: string[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-collect-bytes-'));

/** An agent answering /run with ANSWER's bytes whatever it is sent. */
function startBytesAgent(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let answer = body.includes('"plain"') ? SPLICED_ANSWER : ANSWER;
      if (req.url === '/run') posted.push(body);
      else answer = JSON.stringify(computeAggregateMetrics(JSON.parse(body).verify_responses));
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

before(async () => {
  install = ensureNemoGym();
  agent = await startBytesAgent();
  const { port } = agent.address() as AddressInfo;
  head = await startHeadServer({
    port: 0,
    globalConfigDict: () => ({
      head_server: { host: '127.0.0.1', port: head.port },
      [AGENT]: { responses_api_agents: { bytes_agent: { host: '127.0.0.1', port } } },
    }),
  });
});

after(async () => {
  await new Promise((resolve) => agent?.close(resolve));
  await head?.close();
  rmSync(dir, { recursive: true, force: true });
});

const theirs = path.join(dir, 'theirs');
let ours: string;
const bodies = { theirs: [] as string[], ours: [] as string[] };

/** The same tasks through ng_collect_rollouts (files `theirs*`) and through our collect activities. */
async function collectBoth(): Promise<void> {
  writeFileSync(path.join(dir, 'tasks.jsonl'), `${TASKS.join('\n')}\n`);
  const run = await runNemoGymCommand(
    install,
    'ng_collect_rollouts',
    [
      `+input_jsonl_fpath=${path.join(dir, 'tasks.jsonl')}`,
      `+output_jsonl_fpath=${theirs}.jsonl`,
      `+agent_name=${AGENT}`,
      '+num_repeats=2',
      '+num_repeats_add_seed=true',
      '+num_samples_in_parallel=1',
      '+upload_rollouts_to_wandb=false',
      '+disable_aggregation=true',
      `+head_server={host:127.0.0.1,port:${head.port}}`,
    ],
    dir,
  );
  assert.equal(run.code, 0, run.output.slice(-3000));
  bodies.theirs = posted.splice(0).sort();

  const plan = collectPlan(
    dir,
    { head_url: head.url },
    { agent_name: AGENT, num_repeats: 2, seed_per_repeat: true, chunk_size: 3 },
  );
  await runChunks(plan, (await materialize(plan)).chunks);
  await merge(plan);
  ours = outPrefixOf(plan);
  bodies.ours = posted.splice(0).sort();
}

const read = (file: string) => readFileSync(file, 'utf8');

test('materialized inputs have the bytes ng_collect_rollouts writes', { timeout: 600_000 }, async () => {
  await collectBoth();
  assert.equal(read(`${ours}_materialized_inputs.jsonl`), read(`${theirs}_materialized_inputs.jsonl`));
});

test('rollouts have the bytes ng_collect_rollouts writes', () => {
  assert.ok(orjsonCanonicalObject(SPLICED_ANSWER), 'the second answer is in orjson form, so it is spliced');
  assert.equal(orjsonCanonicalObject(ANSWER), undefined, 'the first answer is not, so it is decoded');
  // NeMo Gym writes rollouts in completion order, we in materialized order: compare the line sets.
  const lines = (file: string) => read(file).split('\n').sort();
  assert.deepEqual(lines(`${ours}.jsonl`), lines(`${theirs}.jsonl`));
});

test('the agent is sent the bytes ng_collect_rollouts sends', () => {
  assert.deepEqual(bodies.ours, bodies.theirs);
});
