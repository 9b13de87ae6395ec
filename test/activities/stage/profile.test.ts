import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { materializedInputsPath, mergedPaths, writeChunkIndex } from '../../../activities/chunk/chunkIndex';
import { profileStage } from '../../../activities/stage/profile';
import { RowIndexWriter } from '../../../activities/stage/rowIndex';
import { rolloutDigest } from '../../../gym/aggregateMetrics';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';
import { rewardProfileOutputPaths, writeRewardProfile, type NemoGymVersion } from '../../../gym/rewardProfile';
import { fixturesDir } from '../../helpers/fixtures';

// The profile stage reads the merge's digests and the row index instead of the rollouts and the
// materialized inputs; what it writes (or the error it stops with) must be what profiling the files
// themselves gives, byte for byte: on NeMo Gym's own profiling cases and on lines whose numbers carry
// Python kinds JSON.parse loses.

type Row = Record<string, unknown>;

const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-profile-'));
after(() => rmSync(root, { recursive: true, force: true }));
let serial = 0;

/** A stage directory as the pipeline leaves it after the merge: files, digests, row index and meta. */
async function mergedStage(inputLines: string[], rolloutLines: string[]): Promise<string> {
  const outPrefix = path.join(root, `stage${serial++}`, 'rollouts');
  mkdirSync(`${outPrefix}_shards`, { recursive: true });
  const inputsText = inputLines.map((line) => `${line}\n`).join('');
  writeFileSync(materializedInputsPath(outPrefix), inputsText);
  writeFileSync(`${outPrefix}.jsonl`, rolloutLines.map((line) => `${line}\n`).join(''));
  writeFileSync(
    mergedPaths(outPrefix).digestsPath,
    rolloutLines.map((line) => `${rolloutDigest(parseKinded(line).kinded as JsonDict) ?? 'null'}\n`).join(''),
  );
  const index = await RowIndexWriter.create(outPrefix);
  let byteOffset = 0;
  for (const line of inputLines) {
    const row = JSON.parse(line) as { _ng_task_index: number; _ng_rollout_index: number; agent_ref: { name: string } };
    const byteLength = Buffer.byteLength(line) + 1;
    await index.add({
      task: row._ng_task_index,
      rollout: row._ng_rollout_index,
      agentName: row.agent_ref.name,
      byteOffset,
      byteLength,
    });
    byteOffset += byteLength;
  }
  const names = await index.close();
  await writeChunkIndex(outPrefix, [0, byteOffset], {
    rows: inputLines.length,
    tasks: 0,
    chunks: 1,
    chunkSize: inputLines.length,
    ...names,
  });
  return outPrefix;
}

/** Every profile file beside the reward profiling file (0.4.0 writes no repeat-level file). */
function profileFiles(rewardProfilingPath: string): string[] {
  const rolloutsPath = rewardProfilingPath.replace(/_reward_profiling\.jsonl$/, '.jsonl');
  return Object.values(rewardProfileOutputPaths(rolloutsPath)).map((file) =>
    existsSync(file) ? readFileSync(file, 'utf8') : 'absent',
  );
}

/** The same files alone, profiled as `ng_reward_profile` reads them. */
async function fromFiles(
  inputLines: string[],
  rolloutLines: string[],
  allowPartialRollouts: boolean,
  nemoGymVersion?: NemoGymVersion,
): Promise<string[]> {
  const dir = path.join(root, `files${serial++}`);
  mkdirSync(dir);
  const materializedInputsPath = path.join(dir, 'rollouts_materialized_inputs.jsonl');
  writeFileSync(materializedInputsPath, inputLines.map((line) => `${line}\n`).join(''));
  writeFileSync(path.join(dir, 'rollouts.jsonl'), rolloutLines.map((line) => `${line}\n`).join(''));
  try {
    const out = await writeRewardProfile({
      materializedInputsPath,
      rolloutsPath: path.join(dir, 'rollouts.jsonl'),
      allowPartialRollouts,
      nemoGymVersion,
    });
    return profileFiles(out.rewardProfilingPath);
  } catch (err) {
    return [`error: ${(err as Error).message.replaceAll(dir, '<dir>')}`];
  }
}

/** `digestsOnly`: the rollouts file is made unreadable, which proves the stage never read it. */
async function fromStage(
  inputLines: string[],
  rolloutLines: string[],
  allowPartialRollouts: boolean,
  digestsOnly = true,
  nemoGymVersion?: NemoGymVersion,
): Promise<string[]> {
  const outPrefix = await mergedStage(inputLines, rolloutLines);
  if (digestsOnly) writeFileSync(`${outPrefix}.jsonl`, 'not JSON\n');
  try {
    const out = await profileStage({ outPrefix, allowPartialRollouts, nemoGymVersion });
    return profileFiles(out.rewardProfilingPath);
  } catch (err) {
    return [`error: ${(err as Error).message.replaceAll(path.dirname(outPrefix), '<dir>')}`];
  }
}

interface ProfileCase {
  name: string;
  materialized_inputs: Row[];
  rollouts: Row[];
  allow_partial_rollouts: boolean;
}

const cases = JSON.parse(
  readFileSync(path.join(fixturesDir, 'gym/reward_profile_cases.json'), 'utf8'),
) as ProfileCase[];

for (const c of cases) {
  test(`NeMo Gym's case ${c.name}: the stage's indexes profile to the files' bytes`, async () => {
    // NeMo Gym's unit cases hand results without a response to the profiler in memory; in a file a
    // rollout always has one.
    const rollouts = c.rollouts.map((r) => JSON.stringify({ response: {}, ...r }));
    const inputs = c.materialized_inputs.map((r) => JSON.stringify(r));
    const expected = await fromFiles(inputs, rollouts, c.allow_partial_rollouts);
    assert.deepEqual(await fromStage(inputs, rollouts, c.allow_partial_rollouts), expected);
  });
}

const input = (task: number, rollout: number, agent: string) =>
  `{"responses_create_params":{"input":[{"role":"user","content":"q${task}"}],"temperature":1.0},"agent_ref":{"name":"${agent}"},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`;
/** A rollout line with `fields` (JSON members, kinds as written) after the response. */
const rollout = (task: number, rollout: number, response: string, fields: string) =>
  `{"responses_create_params":{"input":"q"},"response":${response},${fields},"agent_ref":{"name":"x"},"_ng_task_index":${task},"_ng_rollout_index":${rollout}}`;

test("number kinds, usage, booleans and a column only some rollouts have profile to the files' bytes", async () => {
  const inputs = [input(0, 0, 'b'), input(0, 1, 'b'), input(1, 0, 'a'), input(1, 1, 'a')];
  const rollouts = [
    rollout(
      0,
      0,
      '{"output":[],"usage":{"input_tokens":10,"output_tokens":2.0,"total_tokens":12}}',
      '"reward":1.0,"ok":true',
    ),
    rollout(0, 1, '{"output":[],"usage":null}', '"reward":0.0,"ok":false,"extra":3'),
    rollout(1, 0, '{"output":[],"usage":{"input_tokens":7}}', '"reward":0.5,"input_tokens":99'),
    rollout(1, 1, '{"output":[],"usage":{}}', '"reward":1'),
  ];
  const expected = await fromFiles(inputs, rollouts, false);
  assert.match(expected[0]!, /"max\/reward":1\.0/);
  assert.deepEqual(await fromStage(inputs, rollouts, false), expected);
});

test('a rollout without a response object makes the stage read the files, and do as they do', async () => {
  const inputs = [input(0, 0, 'a'), input(0, 1, 'a')];
  const rollouts = [rollout(0, 0, '{"output":[]}', '"reward":1.0'), rollout(0, 1, 'null', '"reward":0.0')];
  // NeMo Gym 0.7.0 profiles it as a rollout without usage; 0.4.0 refuses it.
  const profiled = await fromFiles(inputs, rollouts, false);
  assert.match(profiled[0]!, /"rollout_id":"0:1"/);
  assert.deepEqual(await fromStage(inputs, rollouts, false, false), profiled);
  const refused = await fromFiles(inputs, rollouts, false, '0.4.0');
  assert.match(refused[0]!, /^error: /);
  assert.deepEqual(await fromStage(inputs, rollouts, false, false, '0.4.0'), refused);
});
