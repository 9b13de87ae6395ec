import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { startHeadServer } from '../../servers/head';
import { collectWith070, collectWithPivotMiner, type Collection } from './collect070';
import { byEnvironmentServer, STAMPS, withoutDiagnostics, withoutStamps, type Collected } from './collect070Lines';
import { type CollectServers } from './collect070Servers';

// Collections with rows whose data stamps some of them `_ng_environment_server` and leaves others
// without (environment_routing_mode agent), for tests of how 0.7.0 routes and groups them: 0.7.0
// stamps an unstamped row's rollout with its server and result type, last, and a stamped row's with
// its result type only (the agent echoed the stamp in place), so each of its lines is cut as it is.

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

/** 0.7.0's line without the stamps pivot-miner does not write, whichever kind of row it came from. */
function withoutStampsOf(line: string): string {
  return withoutStamps(line, !STAMPS.test(line));
}

function readMixed(prefix: string, by: '0.7.0' | 'pivot-miner'): Collected {
  const cut = by === '0.7.0' ? withoutStampsOf : (line: string) => line;
  return {
    materializedInputs: readFileSync(`${prefix}_materialized_inputs.jsonl`, 'utf8'),
    rollouts: lines(`${prefix}.jsonl`).map(cut),
    failures: lines(`${prefix}_failures.jsonl`).map(by === '0.7.0' ? cut : withoutDiagnostics),
    aggregateMetrics: byEnvironmentServer(JSON.parse(readFileSync(`${prefix}_aggregate_metrics.json`, 'utf8'))),
  };
}

/** Both collections of `c` (stamped and unstamped rows mixed), asserting they wrote the same; resolves to what ours wrote. */
export async function assertSameMixedCollection(
  servers: CollectServers,
  dir: string,
  c: Collection,
): Promise<Collected & { prefix: string }> {
  const theirs = readMixed((await collectWith070(servers, dir, c)).prefix, '0.7.0');
  const { prefix } = await collectWithPivotMiner(servers, dir, c);
  const ours = readMixed(prefix, 'pivot-miner');
  assert.equal(ours.materializedInputs, theirs.materializedInputs, 'materialized inputs');
  assert.deepEqual(ours.rollouts, theirs.rollouts, 'rollouts, in order');
  assert.deepEqual(ours.failures, theirs.failures, 'failures sidecar');
  assert.deepEqual(ours.aggregateMetrics, theirs.aggregateMetrics, 'aggregate metrics');
  return { ...ours, prefix };
}

/**
 * The servers behind a head that also lists `relay`, a second `legacy_agent` relay copied from
 * `like` with `fields` added, in front of the same agent; resolves to them and the new head, which the caller closes.
 */
export async function withRelay(
  base: CollectServers,
  like: string,
  relay: string,
  fields: Record<string, unknown> = {},
): Promise<{ servers: CollectServers; close: () => Promise<void> }> {
  const listed = await fetch(new URL('/global_config_dict_yaml', base.head.url));
  // The head answers its YAML as a JSON string, as NeMo Gym's head server does.
  const dict = YAML.parse((await listed.json()) as string) as Record<string, any>;
  dict[relay] = {
    environment_servers: { legacy_agent: { ...dict[like].environment_servers.legacy_agent, ...fields } },
  };
  const head = await startHeadServer({ port: 0, globalConfigDict: () => dict });
  const servers = Object.assign(Object.create(base) as CollectServers, { head });
  return { servers, close: () => head.close() };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Both collections of `c` refuse its rows before any rollout: 0.7.0 printing `message`, ours with
 * `message` naming the task file and `line`.
 */
export async function assertBothRefuse(
  servers: CollectServers,
  dir: string,
  c: Collection,
  { message, line }: { message: string; line: number },
): Promise<void> {
  await collectWith070(servers, dir, { ...c, stopsWith: new RegExp(escapeRegExp(message)) });
  await assert.rejects(collectWithPivotMiner(servers, dir, c), (err: Error) => {
    assert.ok(err.message.includes(message), err.message);
    assert.match(err.message, new RegExp(`tasks\\.jsonl:${line}\\b`));
    return true;
  });
}
