import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { JsonlError } from '../../../gym/errors';
import type { RunningServer } from '../../../servers/http';
import { readJsonlSync } from '../../helpers/jsonl';
import {
  collectPlan,
  materialize,
  outPrefixOf,
  startFakeAgent,
  startFakeHead,
  taskRow,
  writeJsonl,
  type FakeAgent,
} from '../fakeGym';

// Per-row agent routing at materialization: rows keep their own agent_ref, rows without one get the
// config's agent, and a name no server knows stops the stage before any rollout runs.

let alpha: FakeAgent;
let beta: FakeAgent;
let head: RunningServer;
const dirs: string[] = [];

before(async () => {
  const ok = () => ({ response: { output: [] }, reward: 1 });
  alpha = await startFakeAgent('alpha', ok);
  beta = await startFakeAgent('beta', ok);
  head = await startFakeHead([alpha, beta]);
});

after(async () => {
  await Promise.all([alpha.server.close(), beta.server.close(), head.close()]);
});

function freshDir(): string {
  dirs.push(mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-materialize-')));
  return dirs.at(-1)!;
}
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

test('one file may mix agents: each row keeps its agent_ref, rows without one get collect.agent_name', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [
    taskRow('a', { agent_ref: { type: 'responses_api_agents', name: 'beta' } }),
    taskRow('b'),
    taskRow('c', { agent_ref: { name: 'alpha' } }),
  ]);
  const plan = collectPlan(dir, { head_url: head.url });
  const result = await materialize(plan);
  assert.equal(result.rows, 3);
  const rows = readJsonlSync<Record<string, any>>(`${outPrefixOf(plan)}_materialized_inputs.jsonl`);
  assert.deepEqual(
    rows.map((r) => r.agent_ref),
    [{ type: 'responses_api_agents', name: 'beta' }, { name: 'alpha' }, { name: 'alpha' }],
  );
});

test('an agent name no server knows is refused naming file, line and name, before any rollout', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [
    taskRow('a'),
    taskRow('b', { agent_ref: { name: 'beta' } }),
    taskRow('c', { agent_ref: { name: 'gamma' } }),
    // A resources server is listed by the head server, but it is not an agent.
    taskRow('d', { agent_ref: { name: 'some_resources_server' } }),
  ]);
  const plan = collectPlan(dir, { head_url: head.url });
  await assert.rejects(materialize(plan), (err: Error) => {
    assert.ok(err instanceof JsonlError, String(err));
    assert.equal(err.file, path.join(dir, 'tasks.jsonl'));
    assert.equal(err.line, 3);
    assert.match(
      err.message,
      /tasks\.jsonl:3: agent_ref\.name "gamma" is not an agent the servers know \(known: "alpha", "beta"/,
    );
    return true;
  });
  // Not finished, so nothing can be chunked from it, and no agent saw a row.
  assert.equal(existsSync(`${outPrefixOf(plan)}_materialized_inputs.meta.json`), false);
  assert.equal(alpha.runs.length + beta.runs.length, 0);
});

test('servers.agent_url serves collect.agent_name only', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a'), taskRow('b', { agent_ref: { name: 'beta' } })]);
  const plan = collectPlan(dir, { agent_url: alpha.server.url });
  await assert.rejects(
    materialize(plan),
    /tasks\.jsonl:2: agent_ref\.name "beta" is not an agent the servers know \(known: "alpha"/,
  );
});

test('a resources server name is not an agent even when it is the only row name', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a', { agent_ref: { name: 'some_resources_server' } })]);
  await assert.rejects(
    materialize(collectPlan(dir, { head_url: head.url })),
    /tasks\.jsonl:1: agent_ref\.name "some_resources_server"/,
  );
});

test('a stage materialized afresh starts with no failures sidecar; a resume keeps the one it has', async () => {
  const dir = freshDir();
  writeJsonl(path.join(dir, 'tasks.jsonl'), [taskRow('a'), taskRow('b')]);
  const plan = collectPlan(dir, { head_url: head.url });
  const sidecar = `${outPrefixOf(plan)}_failures.jsonl`;
  const stale = { _ng_task_index: 0, _ng_rollout_index: 0, attempt: 1, failure_class: 'http_5xx', error: 'old run' };
  writeJsonl(sidecar, [stale]);
  await materialize(plan);
  assert.equal(existsSync(sidecar), false, "another run's failure lines are not this run's");

  writeJsonl(sidecar, [{ ...stale, error: 'this run' }]);
  await materialize(plan);
  assert.deepEqual(
    readJsonlSync<Record<string, unknown>>(sidecar).map((f) => f.error),
    ['this run'],
    'a resume (materialized inputs in place) keeps its failures',
  );
});
