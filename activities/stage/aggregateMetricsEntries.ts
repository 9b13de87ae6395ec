import type { FileHandle } from 'node:fs/promises';
import { NoDigest, stripForAggregateMetrics } from '../../gym/aggregateMetrics';
import { jsonText, JsonlWriter, readJsonl, readLines } from '../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../gym/kindedJson';
import { KeyedTable, NumberColumn } from '../../gym/rewardProfile/table';
import { environmentServerStamp } from '../../gym/runLabels';

// The `/aggregate_metrics` entries of a merged stage, one group's at a time in key order
// (aggregateMetrics.ts posts them): read from the merge's digests when every rollout has one, else
// made from the rollouts file. A group is an agent's rollouts, or under NeMo Gym 0.7.0 those of one
// environment server (the caller's `groupOf`).

type Row = Record<string, unknown>;

/** The most bytes read at once when lines follow each other. */
const RUN_BYTES = 1 << 20;

/** Where one agent's rollouts are in the file, as columns: a few bytes per rollout however large the trajectories. */
class Places extends KeyedTable {
  private readonly offset = new NumberColumn();
  private readonly size = new NumberColumn();

  add(task: number, rollout: number, offset: number, size: number): void {
    const i = this.addKey(task, rollout);
    this.offset.set(i, offset);
    this.size.set(i, size);
  }

  /**
   * The lines in key order. Lines that follow each other in the file are read together (the merged
   * file is in key order already, so usually all of them are): one read a run, not one a line.
   */
  async *lines(file: FileHandle): AsyncGenerator<string> {
    const order = this.keyOrder();
    for (let first = 0; first < order.length;) {
      let last = first;
      let end = this.offset.get(order[first]!) + this.size.get(order[first]!);
      while (
        last + 1 < order.length &&
        this.offset.get(order[last + 1]!) === end + 1 &&
        end - this.offset.get(order[first]!) < RUN_BYTES
      ) {
        last++;
        end = this.offset.get(order[last]!) + this.size.get(order[last]!);
      }
      const start = this.offset.get(order[first]!);
      const run = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await file.read(run, 0, run.length, start);
      if (bytesRead < run.length) throw new Error(`the file ended before byte ${end}`);
      for (let j = first; j <= last; j++) {
        const at = this.offset.get(order[j]!) - start;
        yield run.toString('utf8', at, at + this.size.get(order[j]!));
      }
      first = last + 1;
    }
  }
}

/** One group's entries in key order, as many times as they are read. */
export type EntrySource = (file: FileHandle) => AsyncIterable<string>;

/** A group's entries and the agent of its first one. */
export interface EntryGroup {
  agent: string;
  lines: EntrySource;
}

/** The group of an entry with a (truthy) agent name and maybe an `_ng_environment_server` stamp. */
export type GroupOf = (agent: string, environmentServer: string | undefined) => string;

const byAgentName: GroupOf = (agent) => agent;

interface EntryLine {
  text: string;
  agent: string | undefined;
  environmentServer: string | undefined;
  task: number;
  rollout: number;
}

async function* entryLines(entriesPath: string): AsyncGenerator<EntryLine & { byteOffset: number; size: number }> {
  for await (const { text, byteOffset, byteLength, terminated } of readLines(entriesPath)) {
    const row = JSON.parse(text) as Row | null;
    if (row === null) throw new NoDigest();
    const ref = row.agent_ref as { name?: unknown } | undefined;
    // Upstream skips results whose agent_ref has no (truthy) name.
    const agent = typeof ref?.name === 'string' && ref.name !== '' ? ref.name : undefined;
    yield {
      text,
      agent,
      environmentServer: environmentServerStamp(row),
      task: row._ng_task_index as number,
      rollout: row._ng_rollout_index as number,
      byteOffset,
      size: byteLength - (terminated ? 1 : 0),
    };
  }
}

/** A group's lines of an entries file in key order: the file's own order, filtered. */
async function* groupLinesInFileOrder(
  entriesPath: string,
  group: string,
  groupOf: GroupOf,
  everyLine: boolean,
): AsyncGenerator<string> {
  if (everyLine) {
    for await (const { text } of readLines(entriesPath)) yield text;
    return;
  }
  for await (const line of entryLines(entriesPath))
    if (line.agent !== undefined && groupOf(line.agent, line.environmentServer) === group) yield line.text;
}

/**
 * Each group's entries in the entries file (one `/aggregate_metrics` entry per rollout, in the
 * rollouts' order), groups in the order their first rollout has after sorting, which is NeMo Gym's
 * order when its agents answer in turn. A file in key order (a merged stage's is) is read again for
 * each group as it is; any other is sorted through each group's places, a few bytes a rollout.
 */
export async function entriesByAgent(
  entriesPath: string,
  groupOf: GroupOf = byAgentName,
): Promise<Map<string, EntryGroup>> {
  const agents = new Map<string, string>();
  let named = 0;
  let lines = 0;
  let previous: EntryLine | undefined;
  let inKeyOrder = true;
  for await (const line of entryLines(entriesPath)) {
    lines++;
    if (previous && (line.task < previous.task || (line.task === previous.task && line.rollout <= previous.rollout)))
      inKeyOrder = false;
    previous = line;
    if (line.agent === undefined) continue;
    named++;
    const group = groupOf(line.agent, line.environmentServer);
    if (!agents.has(group)) agents.set(group, line.agent);
  }
  if (inKeyOrder) {
    const everyLine = agents.size === 1 && named === lines;
    return new Map(
      [...agents].map(([group, agent]) => [
        group,
        { agent, lines: () => groupLinesInFileOrder(entriesPath, group, groupOf, everyLine) },
      ]),
    );
  }
  const byGroup = new Map<string, { agent: string; places: Places }>();
  for await (const { agent, environmentServer, task, rollout, byteOffset, size } of entryLines(entriesPath)) {
    if (agent === undefined) continue;
    const group = groupOf(agent, environmentServer);
    let found = byGroup.get(group);
    if (!found) byGroup.set(group, (found = { agent, places: new Places() }));
    found.places.add(task, rollout, byteOffset, size);
  }
  const first = (places: Places) => places.keyOrder()[0]!;
  return new Map(
    [...byGroup]
      .sort(
        ([, { places: a }], [, { places: b }]) =>
          a.task.get(first(a)) - b.task.get(first(b)) || a.rollout.get(first(a)) - b.rollout.get(first(b)),
      )
      .map(([group, { agent, places }]) => [group, { agent, lines: (file: FileHandle) => places.lines(file) }]),
  );
}

/** The digests' entries by group, or undefined when a rollout has no digest. */
export async function entriesOfDigests(
  digestsPath: string,
  groupOf?: GroupOf,
): Promise<Map<string, EntryGroup> | undefined> {
  try {
    return await entriesByAgent(digestsPath, groupOf);
  } catch (err) {
    if (err instanceof NoDigest) return undefined;
    throw err;
  }
}

/**
 * Every rollout's entry made from the rollouts file, for stages merged before there were digests and
 * for rollouts whose `response` is not an object (which have none). Written under a name of this
 * attempt's own beside the rollouts, out of the way of a retried attempt still running.
 */
export async function entriesOfRollouts(rolloutsPath: string): Promise<string> {
  const out = `${rolloutsPath}.aggregate-entries-${process.pid}-${Date.now()}.tmp`;
  const writer = await JsonlWriter.open(out);
  try {
    for await (const { text } of readJsonl(rolloutsPath))
      await writer.writeLine(`${jsonText(stripForAggregateMetrics(parseKinded(text).kinded as JsonDict))}\n`);
  } finally {
    await writer.close();
  }
  return out;
}
