import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DEFAULT_MAX_STEPS } from '../../servers/agent';
import { startEmbeddedStack, type EmbeddedStack } from '../../servers/embeddedStack';
import { buildGlobalConfigDict, startHeadServer } from '../../servers/head';
import type { RunningServer } from '../../servers/http';
import { ensureNemoGym, runNemoGymCommand } from '../../scripts/lib/nemoGym';
import { stageAccounting } from '../../activities/stage/rolloutAccounting';
import type { RolloutAccounting } from '../../gym/rolloutAccounting';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import { collectPlan, materialize, merge, outPrefixOf, runChunks } from '../activities/fakeGym';

// NeMo Gym 0.7.0's `ng_collect_rollouts` and our collect stage on the same task rows, against the
// same seeded policy simulator, resources server and agent, and what each wrote side by side, for
// tests of 0.7.0's collection options. 0.7.0 posts rows to an environment server rather than to the
// agent; its `legacy_agent` environment server relays `/run` and `/aggregate_metrics` to the agent
// as they are, so the head server lists one whose address is the agent's own.

// Not the name 0.7.0 would generate for the agent's relay (`demo_tool_environment_server`): each
// aggregate-metrics entry then shows that both read the name from the head's config.
export const ENVIRONMENT_SERVER = 'travel_desk_relay';

/** Rewrites the agent's answer (its bytes) to a /run request (parsed, and its `body`), e.g. to report a failure, or answers an HTTP error instead. */
export type AnswerScript = (
  request: Record<string, unknown>,
  answer: string,
  body: string,
) => string | { status: number; body: string };

export interface CollectServers {
  stack: EmbeddedStack;
  head: RunningServer;
  /** What the agent front does to answers: as they are until a test sets it. */
  script: AnswerScript;
  /** The bodies POSTed to the agent's /aggregate_metrics through its front, in arrival order. */
  aggregateRequests: string[];
  close(): Promise<void>;
}

/** The agent as both collections reach it: each /run answer passed through `servers.script`. */
function startAgentFront(
  agentUrl: string,
  servers: Pick<CollectServers, 'script' | 'aggregateRequests'>,
): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/aggregate_metrics') servers.aggregateRequests.push(body);
      fetch(new URL(req.url ?? '/', agentUrl), {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body,
      })
        .then(async (answer) => {
          const text = await answer.text();
          const out = req.url === '/run' && answer.ok ? servers.script(JSON.parse(body), text, body) : text;
          const { status, body: sent } = typeof out === 'string' ? { status: answer.status, body: out } : out;
          res.writeHead(status, { 'content-type': 'application/json' }).end(sent);
        })
        .catch((err: unknown) => res.writeHead(502).end(String(err)));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function port(url: string): number {
  return Number(new URL(url).port);
}

/**
 * The agent under another name, with its environment server, for rows routed to several agents:
 * the same server (one stack serves one agent), listed twice in the head server.
 */
function aliasEntries(name: string, host: string, port: number, agentEntry: unknown): Record<string, unknown> {
  return {
    [name]: agentEntry,
    [legacyEnvironmentServerName(name)]: {
      environment_servers: {
        legacy_agent: { host, port, agent_server: { type: 'responses_api_agents', name } },
      },
    },
  };
}

/**
 * The embedded stack with `seed`, behind a head server that also lists the agent's environment
 * server, and the agent again under each of `aliases`.
 */
export async function startCollectServers(seed: number, aliases: string[] = []): Promise<CollectServers> {
  const stack = await startEmbeddedStack({ seed });
  const host = '127.0.0.1';
  const servers = { script: ((_request, answer) => answer) as AnswerScript, aggregateRequests: [] as string[] };
  const front = await startAgentFront(stack.urls.agent, servers);
  const frontPort = (front.address() as AddressInfo).port;
  const head: RunningServer = await startHeadServer({
    port: 0,
    globalConfigDict: () => {
      const dict = buildGlobalConfigDict({
        head: { host, port: head.port },
        model: { name: stack.names.model, host, port: port(stack.urls.model) },
        resources: { name: stack.names.resources, host, port: port(stack.urls.resources) },
        agent: { name: stack.names.agent, host, port: frontPort, maxSteps: DEFAULT_MAX_STEPS },
      });
      const aliased = aliases.map((name) => aliasEntries(name, host, frontPort, dict[stack.names.agent]));
      return Object.assign(dict, ...aliased, {
        [ENVIRONMENT_SERVER]: {
          environment_servers: {
            legacy_agent: {
              host,
              port: frontPort,
              agent_server: { type: 'responses_api_agents', name: stack.names.agent },
            },
          },
        },
      }) as Record<string, unknown>;
    },
  });
  const closeFront = () => new Promise<void>((resolve) => front.close(() => resolve()));
  return Object.assign(servers, {
    stack,
    head,
    close: async () => void (await Promise.all([head.close(), closeFront(), stack.close()])),
  });
}

/** What both collections are asked for; `options` are the 0.7.0 option names and values, as in our collect config. */
type OptionValue = boolean | number | string | string[];

export interface Collection {
  rowsFile: string;
  numRepeats: number | Record<string, number>;
  /** Both collections are told the stack's agent as `agent_name` unless this is set. */
  withoutAgentName?: boolean;
  options: Record<string, OptionValue | Record<string, OptionValue>>;
  /** Rows carry `_ng_environment_server` from materialization (`environment_routing_mode: legacy`). */
  stamped?: boolean;
  /** What both must stop with once their files are written (`require_complete`); both succeed without it. */
  stopsWith?: RegExp;
}

/** An option's value as a Hydra override writes it: a list as `[a,b]`, a dict as `{k:v}`. */
function hydraValue(value: Collection['options'][string]): string {
  if (Array.isArray(value)) return `[${value.join(',')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}:${hydraValue(v)}`)
      .join(',')}}`;
  return String(value);
}

/** 0.7.0's `ng_collect_rollouts` one rollout at a time (so its file is in dispatch order); resolves to its output prefix and what it printed. */
export async function collectWith070(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<{ prefix: string; output: string }> {
  const prefix = path.join(dir, 'theirs', 'rollouts');
  mkdirSync(path.dirname(prefix), { recursive: true });
  const run = await runNemoGymCommand(
    ensureNemoGym('0.7.0'),
    'ng_collect_rollouts',
    [
      `+input_jsonl_fpath=${c.rowsFile}`,
      `+output_jsonl_fpath=${prefix}.jsonl`,
      ...(c.withoutAgentName ? [] : [`+agent_name=${servers.stack.names.agent}`]),
      `+num_repeats=${hydraValue(c.numRepeats)}`,
      '+num_repeats_add_seed=true',
      '+num_samples_in_parallel=1',
      '+disable_health_check=true',
      `+head_server={host:127.0.0.1,port:${servers.head.port}}`,
      ...Object.entries(c.options).map(([key, value]) => `+${key}=${hydraValue(value)}`),
    ],
    path.dirname(prefix),
  );
  if (c.stopsWith) {
    assert.notEqual(run.code, 0, 'ng_collect_rollouts should have failed');
    assert.match(run.output, c.stopsWith);
  } else assert.equal(run.code, 0, run.output.slice(-3000));
  return { prefix, output: run.output };
}

/** Our collect stage's activities on the same rows and servers; resolves to its output prefix. */
export async function collectWithPivotMiner(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<{ prefix: string; accounting: RolloutAccounting }> {
  const baseDir = path.join(dir, 'ours');
  mkdirSync(baseDir, { recursive: true });
  copyFileSync(c.rowsFile, path.join(baseDir, 'tasks.jsonl'));
  const plan = collectPlan(
    baseDir,
    { head_url: servers.head.url },
    {
      agent_name: c.withoutAgentName ? undefined : servers.stack.names.agent,
      num_repeats: c.numRepeats,
      seed_per_repeat: true,
      chunk_size: 3,
      // 0.7.0 makes one attempt at a rollout per run: its retries are resumes.
      max_attempts: 1,
      ...c.options,
    },
  );
  await runChunks(plan, (await materialize(plan)).chunks);
  if (c.stopsWith) await assert.rejects(merge(plan), c.stopsWith);
  else await merge(plan);
  const prefix = outPrefixOf(plan);
  return { prefix, accounting: await stageAccounting({ plan, stage: 'collect', outPrefix: prefix }) };
}

/** What a collection wrote, in the form both are compared in. */
export interface Collected {
  materializedInputs: string;
  /** Rollout lines in file order. */
  rollouts: string[];
  failures: string[];
  /** `<prefix>_aggregate_metrics.json`, parsed, its entries by environment server name. */
  aggregateMetrics: unknown;
}

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

// 0.7.0 stamps each rollout with the environment server it ran through (the agent's relay, or an
// alias's) and its result type, last; pivot-miner has no environment servers (docs/nemo-gym.md, the
// 0.7.0 table), so they are cut from 0.7.0's lines, and the test fails if they are not there to cut. A
// rollout its invalid-judge migration (retry_invalid_judge_responses) moved to the sidecar has its
// class, its deliverable's reuse flag when it has one, and marker after them.
export const STAMPS = new RegExp(
  ',"_ng_environment_server":"[a-z_]+","_ng_result_type":"[a-z_]+"' +
    '(,"_ng_failure_class":"judge_invalid"(?:,"reuse_cached_deliverable":true)?,"_ng_migrated_invalid_judge_response":true)?}$',
);

// A row stamped at materialization has its environment server where the agent echoed it: only the
// result type is last.
const RESULT_TYPE = /,"_ng_result_type":"legacy_agent"}$/;

export function withoutStamps(line: string, stamped = false): string {
  if (!stamped) {
    assert.match(line, STAMPS, "0.7.0's rollout ends with its environment server and result type stamps");
    return line.replace(STAMPS, '$1}');
  }
  assert.match(line, RESULT_TYPE, "0.7.0's rollout ends with its result type stamp");
  return line.replace(RESULT_TYPE, '}');
}

// After each failed attempt an agent reported, pivot-miner writes the attempt, its class and error
// to the sidecar row; 0.7.0 writes none of them, so they are cut from ours.
const DIAGNOSTICS = /,"attempt":\d+,"failure_class":"[a-z_]+","error":"(?:[^"\\]|\\.)*"}$/;

export function withoutDiagnostics(line: string): string {
  return DIAGNOSTICS.test(line) ? `${line.replace(DIAGNOSTICS, '')}}` : line;
}

// 0.7.0 writes one entry per environment server in the order its concurrent /aggregate_metrics
// calls complete (asyncio.as_completed), which no run fixes; entries are compared by server name.
export function byEnvironmentServer(metrics: unknown): unknown {
  if (!Array.isArray(metrics)) return metrics;
  const name = (entry: unknown) => String((entry as Record<string, unknown>)._ng_environment_server);
  return [...(metrics as unknown[])].sort((a, b) => name(a).localeCompare(name(b)));
}

export function readCollected(prefix: string, by: '0.7.0' | 'pivot-miner', stamped?: boolean): Collected {
  const rollouts = lines(`${prefix}.jsonl`);
  const cut = (line: string) => withoutStamps(line, stamped);
  const metrics = byEnvironmentServer(JSON.parse(readFileSync(`${prefix}_aggregate_metrics.json`, 'utf8')));
  return {
    materializedInputs: readFileSync(`${prefix}_materialized_inputs.jsonl`, 'utf8'),
    rollouts: by === '0.7.0' ? rollouts.map(cut) : rollouts,
    failures: lines(`${prefix}_failures.jsonl`).map(by === '0.7.0' ? cut : withoutDiagnostics),
    aggregateMetrics: metrics,
  };
}

/** Both collections of `c`, asserting they wrote the same; resolves to what ours wrote and counted, and what 0.7.0 printed. */
export async function assertSameCollection(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<Collected & { prefix: string; accounting: RolloutAccounting; printed070: string }> {
  const run070 = await collectWith070(servers, dir, c);
  const theirs = readCollected(run070.prefix, '0.7.0', c.stamped);
  const run = await collectWithPivotMiner(servers, dir, c);
  const ours = readCollected(run.prefix, 'pivot-miner');
  assert.equal(ours.materializedInputs, theirs.materializedInputs, 'materialized inputs');
  assert.deepEqual(ours.rollouts, theirs.rollouts, 'rollouts, in order');
  assert.deepEqual(ours.failures, theirs.failures, 'failures sidecar');
  assert.deepEqual(ours.aggregateMetrics, theirs.aggregateMetrics, 'aggregate metrics');
  return { ...ours, prefix: run.prefix, accounting: run.accounting, printed070: run070.output };
}

const PROFILE_FILES = ['_agent_metrics.json', '_repeat_level_metrics.json', '_reward_profiling.jsonl'];

/**
 * 0.7.0's `ng_reward_profile` (partial, as our collect profiles) on the rollouts and materialized
 * inputs our collect wrote at `prefix`, asserting it writes our three profile files byte for byte.
 */
export async function assertSameProfile(prefix: string): Promise<void> {
  const dir = `${prefix}_profiled_by_070`;
  mkdirSync(dir);
  const rollouts = path.join(dir, 'rollouts.jsonl');
  copyFileSync(`${prefix}.jsonl`, rollouts);
  const run = await runNemoGymCommand(
    ensureNemoGym('0.7.0'),
    'ng_reward_profile',
    [
      `+materialized_inputs_jsonl_fpath=${prefix}_materialized_inputs.jsonl`,
      `+rollouts_jsonl_fpath=${rollouts}`,
      '++allow_partial_rollouts=True',
    ],
    dir,
  );
  assert.equal(run.code, 0, run.output.slice(-3000));
  for (const file of PROFILE_FILES)
    assert.equal(
      readFileSync(`${prefix}${file}`, 'utf8'),
      readFileSync(path.join(dir, `rollouts${file}`), 'utf8'),
      file,
    );
}

/** The (task, rollout) index pairs of materialized inputs or rollouts, in order. */
export function indexOrder(text: string | string[]): string[] {
  const all = typeof text === 'string' ? text.split('\n').filter(Boolean) : text;
  return all.map((line) => {
    const row = JSON.parse(line) as { _ng_task_index: number; _ng_rollout_index: number };
    return `${row._ng_task_index}:${row._ng_rollout_index}`;
  });
}
