import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { completionSummary } from './completion';
import { profileTables, type CompletionSummary, type Profile } from './profile';
import { canonicalSample, RolloutNumberKinds, sampleValue } from './pythonTypes';
import type { ProfileSources } from './sources';
import { profileKeyOrdered, type StreamedGroup } from './stream';
import { InputTable, RolloutTable } from './table';
import type { PyDict, PyValue } from '../pythonJson';

// A reward profile either way its sources allow: a task at a time when they come in key order, else
// from tables of every rollout. Both give the group rows (each `sample` read back from the
// materialized inputs file as it is written) and the agent rows that index.ts writes.

/** How a profile is made: whose rules (NeMo Gym 0.7.0's or 0.4.0's), whether rollouts may be
 * missing, and whether the materialized inputs are orjson's own bytes (see RewardProfileOptions). */
export interface ProfileRules {
  gym070: boolean;
  allowPartialRollouts: boolean;
  canonicalInputs: boolean;
}

/**
 * Where each group's `sample` is in the materialized inputs: the row of the group's lowest measured
 * rollout. Samples are the bulk of a profile (full prompts and tool lists), so only their place is
 * kept while profiling, and each is read back when its group row is written. Only one row a
 * (task, agent) is noted: a group is a task, or under NeMo Gym 0.7.0's fan-out a (task, agent).
 */
class SamplePlaces {
  private readonly best = new Map<string, { position: number; rollout: number; place: LinePlace }>();
  private byPosition: Map<number, LinePlace> | undefined;

  constructor(
    private readonly results: RolloutTable,
    private readonly gym070: boolean,
  ) {}

  note(inputPosition: number, task: number, rollout: number, agent: string, place: LinePlace): void {
    const i = this.results.find(task, rollout);
    if (i === undefined || (this.gym070 && this.results.masked.has(i))) return;
    const key = this.gym070 ? `${task}\0${agent}` : String(task);
    const seen = this.best.get(key);
    if (!seen || rollout < seen.rollout) this.best.set(key, { position: inputPosition, rollout, place });
  }

  place(inputPosition: number): LinePlace {
    this.byPosition ??= new Map([...this.best.values()].map((b) => [b.position, b.place]));
    return this.byPosition.get(inputPosition)!;
  }
}

interface LinePlace {
  byteOffset: number;
  byteLength: number;
}

/** A profile either way: group rows to write one by one, then the agent rows. */
export interface Profiled extends Pick<Profile, 'agentRollouts' | 'coverage' | 'columns'> {
  summary: CompletionSummary;
  groups: AsyncIterable<StreamedGroup>;
  agents(): PyDict[];
}

/** A sample as upstream writes it: the input line with Python's types, indices removed. */
async function readSample(
  file: FileHandle,
  place: { byteOffset: number; byteLength: number },
  canonical: boolean,
): Promise<PyValue> {
  const line = Buffer.alloc(place.byteLength);
  // One short read of a line just written, from the page cache: synchronous costs less than a trip
  // through the thread pool, once per task.
  readSync(file.fd, line, 0, line.length, place.byteOffset);
  const text = line
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimEnd();
  return (canonical ? (canonicalSample(text) as unknown as PyValue | undefined) : undefined) ?? sampleValue(text);
}

/** The profile of sources in key order, a task at a time (stream.ts); NotInKeyOrder if they are not. */
export async function streamedProfile(
  sources: ProfileSources,
  inputsFile: FileHandle,
  rules: ProfileRules,
): Promise<Profiled> {
  const profile = await profileKeyOrdered(sources, rules.allowPartialRollouts, rules.gym070);
  return {
    ...profile,
    summary: profile.summary,
    groups: profile.groups((input) => readSample(inputsFile, input, rules.canonicalInputs)),
    agents: () => profile.agents(),
  };
}

/** The profile of sources in any order, from tables of every rollout (table.ts). */
export async function tableProfile(
  sources: ProfileSources,
  inputsFile: FileHandle,
  rules: ProfileRules,
): Promise<Profiled> {
  const { gym070 } = rules;
  const results = new RolloutTable(true);
  const kinds = new RolloutNumberKinds();
  for await (const { task, rollout, result, text } of sources.results()) {
    const position = results.add(task, rollout, result);
    // A masked rollout is no part of the stats frame, so its number kinds decide nothing.
    if (!(gym070 && results.masked.has(position))) kinds.add(position, text);
  }
  const inputs = new InputTable();
  const samples = new SamplePlaces(results, gym070);
  for await (const { task, rollout, agentName, byteOffset, byteLength } of sources.inputs()) {
    samples.note(inputs.add(task, rollout, agentName), task, rollout, agentName, { byteOffset, byteLength });
  }
  const profile = profileTables(inputs, results, rules.allowPartialRollouts, gym070);
  async function* groups(): AsyncGenerator<StreamedGroup> {
    for (const { row, rollouts } of profile.groups((i) => i)) {
      // The sample key already sits where upstream puts it; only its value is filled in, re-read with
      // Python's types so its numbers keep the form they have in the materialized inputs.
      const typed = kinds.groupRow(
        row,
        rollouts,
        await readSample(inputsFile, samples.place(row.sample as number), rules.canonicalInputs),
      );
      const { sample: _sample, ...stats } = row;
      yield { row: stats, typed };
    }
  }
  return {
    ...profile,
    summary: completionSummary(inputs, results),
    groups: groups(),
    agents: () => profile.agents().map((row) => kinds.agentRow(row)),
  };
}
