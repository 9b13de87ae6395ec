import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../../../scripts/lib/net';
import { startEmbeddedStack } from '../../../servers/embeddedStack';
import { startPolicyModelServer } from '../../../servers/policyModel';
import type { RunningServer } from '../../../servers/http';
import {
  baseDirWith,
  check as runCheck,
  type Config,
  demoTasks,
  demoTaskLines,
  lineOf,
  problems,
  removeBaseDirs,
} from '../../helpers/checkCli';
import { prepareRun } from '../../../activities/run/prepare';
import { recordPublished } from '../../../activities/run/publishedDigests';
import { RUN_MANIFEST_FILE } from '../../../gym/runManifest';

// `pivot-miner check` against real files and real HTTP servers: a good config passes with the run
// it would start; each broken config or input is named with file:line, the command exits non-zero,
// and no check writes a byte into the base directory.

const API_KEY = 'sk-check-test-secret-4711';

let model: RunningServer;
let rejectingModel: Server;
let rejectingModelUrl: string;

before(async () => {
  model = await startPolicyModelServer({ seed: 7, host: '127.0.0.1', port: 0 });
  // An engine that refuses every key, quoting it back as careless proxies do.
  rejectingModel = createServer((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: `bad key ${req.headers.authorization ?? ''}` }));
  });
  await new Promise<void>((resolve) => rejectingModel.listen(0, '127.0.0.1', resolve));
  const address = rejectingModel.address();
  assert.ok(address && typeof address === 'object');
  rejectingModelUrl = `http://127.0.0.1:${address.port}`;
});

after(async () => {
  await model?.close();
  await new Promise((resolve) => rejectingModel?.close(resolve));
  removeBaseDirs();
});

function goodConfig(): Config {
  return {
    name: 'check_test',
    servers: { mode: 'embedded' },
    collect: { input_jsonl: 'data/tasks.jsonl', agent_name: 'demo_tool_agent', num_repeats: 3 },
    local_profile: { num_samples: 5, model: { url: model.url, api: 'responses', api_key_env: 'CHECK_TEST_KEY' } },
  };
}

/** Runs `pivot-miner <command>` in `baseDir` with the test's API key set, unless `env` says otherwise. */
function check(
  baseDir: string,
  env: NodeJS.ProcessEnv = { CHECK_TEST_KEY: API_KEY },
  command = 'check',
  args: string[] = [],
) {
  return runCheck(baseDir, { CHECK_TEST_KEY: undefined, ...env }, command, args);
}

test('a good config passes and shows what the run would do', async () => {
  const dir = baseDirWith(goodConfig());
  const { code, stdout, stderr } = await check(dir);
  assert.equal(code, 0, stderr);
  const rows = demoTaskLines().length;
  assert.match(stdout, new RegExp(`input +${path.join(dir, 'data/tasks.jsonl')}: ${rows} rows, ${rows} tasks`));
  assert.match(stdout, new RegExp(`rollouts +${rows * 3} \\(${rows} rows × num_repeats 3\\)`));
  assert.match(stdout, /samples +5 per pivot candidate/);
  assert.match(stdout, /stages +prepare → collect → convert → local_profile → publish/);
  assert.match(stdout, new RegExp(`run dir +${path.join(dir, 'artifacts/runs/pivot-mining-START_TIME')}`));
  assert.match(stdout, /^ok: nothing a run would refuse$/m);
  assert.doesNotMatch(stdout + stderr, new RegExp(API_KEY));
});

test('with num_repeats per agent, the outline counts the rollouts each row gets', async () => {
  const config = goodConfig();
  const lines = demoTaskLines();
  const row = JSON.parse(lines[0]!) as Config;
  lines[0] = JSON.stringify({ ...row, task_source: 'travel' });
  // No entry for the dispatched agent, so the row's own task_source, then _default.
  config.collect.num_repeats = { travel: 4, _default: 2 };
  const { code, stdout, stderr } = await check(baseDirWith(config, lines));
  assert.equal(code, 0, stderr);
  const rows = lines.length;
  const basis = `${rows} rows, num_repeats \\{"travel":4,"_default":2\\}`;
  assert.match(stdout, new RegExp(`rollouts +${4 + (rows - 1) * 2} \\(${basis}\\)`));
});

test('--run-id of a run with files damaged since they were published: each named, and what a resume does', async () => {
  const dir = baseDirWith(goodConfig());
  const settings = { baseDir: dir, artifactsRoot: path.join(dir, 'artifacts') };
  const { runDir } = await prepareRun(settings, { config_path: 'config.yaml', run_id: 'damaged' }, 'wf-damaged');
  const pivots = path.join(runDir, 'dataset', 'pivots.jsonl');
  mkdirSync(path.dirname(pivots));
  writeFileSync(pivots, '{"p":1}\n');
  await recordPublished(runDir, 'publish', [pivots]);
  const undamaged = await check(dir, { CHECK_TEST_KEY: API_KEY }, 'check', ['--run-id', 'damaged']);
  assert.equal(undamaged.code, 0, undamaged.stderr);

  writeFileSync(pivots, '{"p":2}\n');
  const manifest = path.join(runDir, RUN_MANIFEST_FILE);
  const recorded = readFileSync(manifest);
  // Cut short: no longer a manifest, so nothing tells what the run was.
  const truncated = recorded.subarray(0, Math.floor(recorded.length / 2));
  writeFileSync(manifest, truncated);
  const { code, stderr } = await check(dir, { CHECK_TEST_KEY: API_KEY }, 'check', ['--run-id', 'damaged']);
  assert.equal(code, 1);
  const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
  assert.deepEqual(problems(stderr), [
    `${manifest} is truncated since it was published: expected sha256 ${sha(recorded)} (${recorded.length} bytes), ` +
      `found sha256 ${sha(truncated)} (${truncated.length} bytes); ` +
      'it cannot be rebuilt, so the run refuses to resume; start a new run id',
  ]);
  assert.ok(
    stderr.includes(
      `note: ${pivots} is changed since it was published: expected sha256 ${sha('{"p":1}\n')} (8 bytes), ` +
        `found sha256 ${sha('{"p":2}\n')} (8 bytes); a resume writes it again (published by publish)\n`,
    ),
    stderr,
  );
});

test('a config that fails the schema: every issue with its line', async () => {
  const text = [
    'name: check_test',
    'collect:',
    '  input_jsonl: data/tasks.jsonl',
    '  agent_name: demo_tool_agent',
    '  num_repeats: four',
    'local_profile:',
    '  num_sample: 8',
    '',
  ].join('\n');
  const dir = baseDirWith(text);
  const { code, stderr } = await check(dir);
  assert.equal(code, 1);
  const config = path.join(dir, 'config.yaml');
  assert.deepEqual(
    problems(stderr).map((p) => p.split(': ').slice(0, 2).join(': ')),
    [
      `${config}:${lineOf(text, 'num_repeats')}: collect.num_repeats`,
      `${config}:${lineOf(text, 'num_sample:')}: local_profile`,
    ],
  );
  assert.match(stderr, /Unrecognized key: "num_sample"/);
});

test('a missing input file is named at its config line', async () => {
  const config = goodConfig();
  config.collect.input_jsonl = 'data/missing.jsonl';
  const dir = baseDirWith(config);
  const { code, stderr } = await check(dir);
  assert.equal(code, 1);
  const text = readFileSync(path.join(dir, 'config.yaml'), 'utf8');
  assert.deepEqual(problems(stderr), [
    `${path.join(dir, 'config.yaml')}:${lineOf(text, 'input_jsonl')}: collect.input_jsonl: ${path.join(dir, 'data/missing.jsonl')} cannot read: ENOENT`,
  ]);
});

test('an input file outside the base directory is refused', async () => {
  const config = goodConfig();
  config.collect.input_jsonl = demoTasks;
  const { code, stderr } = await check(baseDirWith(config));
  assert.equal(code, 1);
  assert.match(problems(stderr)[0]!, /collect\.input_jsonl: path .* outside the allowed root/);
});

test('a bad JSONL line is named file:line', async () => {
  const lines = demoTaskLines();
  lines[2] = lines[2]!.slice(0, 40);
  const dir = baseDirWith(goodConfig(), lines);
  const { code, stdout, stderr } = await check(dir);
  assert.equal(code, 1);
  const found = problems(stderr);
  assert.equal(found.length, 1, stderr);
  assert.ok(found[0]!.startsWith(`${path.join(dir, 'data/tasks.jsonl')}:3: `), found[0]);
  assert.match(stdout, /: 2 rows, 2 tasks before its first bad line\n/);
});

test('an unknown agent and a dead model endpoint: both listed, the key never shown', async () => {
  const lines = demoTaskLines();
  const row = JSON.parse(lines[1]!) as Config;
  lines[1] = JSON.stringify({ ...row, agent_ref: { type: 'responses_api_agents', name: 'old_agent' } });
  const config = goodConfig();
  // agent_name re-routes every row (NeMo Gym 0.7.0); an agent_map entry wins over it.
  config.collect.agent_map = { old_agent: 'no_such_agent' };
  config.local_profile.model.url = `http://127.0.0.1:${await freePort()}`;
  const dir = baseDirWith(config, lines);
  const { code, stdout, stderr } = await check(dir);
  assert.equal(code, 1);
  const text = readFileSync(path.join(dir, 'config.yaml'), 'utf8');
  const found = problems(stderr);
  assert.equal(found.length, 2, stderr);
  assert.match(found[0]!, /tasks\.jsonl:2: agent_ref\.name "no_such_agent" is not an agent the servers know/);
  assert.ok(found[1]!.startsWith(`${path.join(dir, 'config.yaml')}:${lineOf(text, 'url:')}: `), found[1]);
  assert.match(found[1]!, /model endpoint did not answer a responses request: .*ECONNREFUSED/);
  // The outline is still shown: the rows parsed.
  assert.match(stdout, /rollouts/);
  assert.doesNotMatch(stdout + stderr, new RegExp(API_KEY));
});

test('a model that refuses the key, and a key that is not set', async () => {
  const config = goodConfig();
  config.local_profile.model.url = rejectingModelUrl;
  const refused = await check(baseDirWith(config));
  assert.equal(refused.code, 1);
  assert.match(problems(refused.stderr)[0]!, /model endpoint did not answer a responses request: .*401/);
  assert.doesNotMatch(refused.stdout + refused.stderr, new RegExp(API_KEY), 'the key is never printed');

  const unset = await check(baseDirWith(config), {});
  assert.equal(unset.code, 1);
  assert.match(problems(unset.stderr)[0]!, /local_profile\.model\.api_key_env: CHECK_TEST_KEY is not set/);
});

test('run refuses what check refuses, before it connects to Temporal', async () => {
  const config = goodConfig();
  config.collect.input_jsonl = 'data/missing.jsonl';
  const dir = baseDirWith(config);
  // Nothing listens there: a run that tried to start would fail to connect instead.
  const temporal = `127.0.0.1:${await freePort()}`;
  const { code, stderr } = await check(dir, { CHECK_TEST_KEY: API_KEY, TEMPORAL_ADDRESS: temporal }, 'run');
  assert.equal(code, 1);
  assert.match(problems(stderr)[0]!, /collect\.input_jsonl: .*missing\.jsonl cannot read: ENOENT/);
  assert.doesNotMatch(stderr, new RegExp(temporal));
});

test('attach mode: agents and the model through a head server, and a head server that is down', async () => {
  const stack = await startEmbeddedStack({ seed: 7 });
  try {
    const lines = demoTaskLines();
    const row = JSON.parse(lines[0]!) as Config;
    lines.push(JSON.stringify({ ...row, agent_ref: { type: 'responses_api_agents', name: 'old_agent' } }));
    const config = goodConfig();
    config.collect.agent_map = { old_agent: 'no_such_agent' };
    config.servers = { mode: 'attach', head_url: stack.urls.head };
    delete config.local_profile.model;
    const attached = await check(baseDirWith(config, lines));
    assert.equal(attached.code, 1);
    assert.deepEqual(
      problems(attached.stderr).map((p) => p.replace(/^.*tasks\.jsonl:/, 'tasks.jsonl:').split(' (')[0]),
      [`tasks.jsonl:${lines.length}: agent_ref.name "no_such_agent" is not an agent the servers know`],
    );
    assert.match(attached.stderr, /known: "demo_tool_agent"/);
  } finally {
    await stack.close();
  }

  const config = goodConfig();
  config.servers = { mode: 'attach', head_url: `http://127.0.0.1:${await freePort()}` };
  delete config.local_profile.model;
  const dir = baseDirWith(config);
  const down = await check(dir);
  assert.equal(down.code, 1);
  const headLine = lineOf(readFileSync(path.join(dir, 'config.yaml'), 'utf8'), 'head_url');
  const found = problems(down.stderr);
  assert.equal(found.length, 2, down.stderr);
  for (const problem of found) {
    assert.ok(problem.startsWith(`${path.join(dir, 'config.yaml')}:${headLine}: `), problem);
    assert.match(problem, /ECONNREFUSED/);
  }
});
