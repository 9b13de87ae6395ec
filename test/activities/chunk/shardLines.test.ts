import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseShardLine, readShardEntries, shardLine } from '../../../activities/chunk/shardLines';
import { JsonlError } from '../../../gym/errors';
import { parseKinded, type JsonDict } from '../../../gym/kindedJson';

// A shard line carries the rollout's digest before its line; both must come back exactly, with
// Python's number kinds, and a shard from before digests must read the same.

const rolloutText =
  '{"responses_create_params":{"input":"hi\\tthere"},"response":{"output":[],"usage":{"input_tokens":3,"output_tokens":1.0}},' +
  '"reward":1.0,"big":12345678901234567890,"_ng_task_index":4,"_ng_rollout_index":2}';

test('a shard line holds the rollout line and its /aggregate_metrics entry, kinds kept, split at the first tab', () => {
  const line = shardLine(parseKinded(rolloutText).kinded as JsonDict);
  assert.ok(line.endsWith('\n'));
  const entry = parseShardLine({ text: line.slice(0, -1) });
  assert.equal(entry.line, rolloutText);
  assert.equal(
    entry.digest,
    '{"reward":1.0,"big":12345678901234567890,"_ng_task_index":4,"_ng_rollout_index":2,"response":{"usage":{"input_tokens":3,"output_tokens":1.0}}}',
  );
  assert.deepEqual([entry.task, entry.rollout], [4, 2]);
});

test('a rollout whose response is not an object has no digest, and its key comes from its line', () => {
  const text = '{"response":null,"reward":0,"_ng_task_index":1,"_ng_rollout_index":0}';
  const entry = parseShardLine({ text: shardLine(parseKinded(text).kinded as JsonDict).slice(0, -1) });
  assert.equal(entry.digest, 'null');
  assert.equal(entry.line, text);
  assert.deepEqual([entry.task, entry.rollout], [1, 0]);
});

test('a shard line written before there were digests is the rollout alone, and reads the same', () => {
  const fresh = parseShardLine({ text: shardLine(parseKinded(rolloutText).kinded as JsonDict).slice(0, -1) });
  assert.deepEqual(parseShardLine({ text: rolloutText }), fresh);
});

test('a shard read as bytes gives what parseShardLine gives for each line, torn tail dropped, none when absent', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'shard-bytes-'));
  try {
    const nullDigest = '{"response":null,"reward":0,"_ng_task_index":1,"_ng_rollout_index":0}';
    const lines = [
      shardLine(parseKinded(rolloutText).kinded as JsonDict),
      shardLine(parseKinded(nullDigest).kinded as JsonDict),
      '\n',
      `${rolloutText.replace('"_ng_task_index":4', '"_ng_task_index":5')}\n`,
    ];
    const file = path.join(dir, 'shard.jsonl');
    await writeFile(file, `${lines.join('')}${lines[0]!.slice(0, 40)}`);
    const read = await readShardEntries(file);
    const expected = [lines[0]!, lines[1]!, lines[3]!].map((l) => parseShardLine({ text: l.slice(0, -1) }));
    assert.deepEqual(
      read.map((e) => ({ ...e, digest: e.digest.toString('utf8'), line: e.line.toString('utf8') })),
      expected,
    );
    assert.deepEqual(await readShardEntries(path.join(dir, 'absent.jsonl')), []);
    await writeFile(file, Buffer.concat([Buffer.from(lines[0]!.slice(0, -2)), Buffer.from([0xff, 0x7d, 0x0a])]));
    await assert.rejects(
      readShardEntries(file),
      (err: unknown) => err instanceof JsonlError && /:1: invalid UTF-8$/.test(err.message),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
