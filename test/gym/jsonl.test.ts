import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import {
  JsonlWriter,
  jsonLine,
  READ_CHUNK_BYTES,
  readJsonl,
  truncateTornTail,
  type JsonlRecord,
} from '../../gym/jsonl';
import { JsonlError } from '../../gym/errors';
import { fixturesDir } from '../helpers/fixtures';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'jsonl-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileWith(name: string, content: string | Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, content);
  return file;
}

async function readAll(file: string, opts?: Parameters<typeof readJsonl>[1]): Promise<JsonlRecord[]> {
  const out: JsonlRecord[] = [];
  for await (const record of readJsonl(file, opts)) out.push(record);
  return out;
}

async function readError(file: string, opts?: Parameters<typeof readJsonl>[1]): Promise<JsonlError> {
  try {
    await readAll(file, opts);
  } catch (err) {
    assert.ok(err instanceof JsonlError, `expected JsonlError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a JsonlError');
}

test('records carry value, 1-based line, byte offset and length', async () => {
  const file = await fileWith('basic.jsonl', '{"a":1}\n[2,3]\n"x"\n');
  const records = await readAll(file);
  assert.deepEqual(
    records.map(({ value, line, byteOffset, byteLength }) => ({ value, line, byteOffset, byteLength })),
    [
      { value: { a: 1 }, line: 1, byteOffset: 0, byteLength: 8 },
      { value: [2, 3], line: 2, byteOffset: 8, byteLength: 6 },
      { value: 'x', line: 3, byteOffset: 14, byteLength: 4 },
    ],
  );
  assert.equal(records[0]?.text, '{"a":1}');
});

test('blank and whitespace-only lines are skipped but still counted', async () => {
  const file = await fileWith('blank.jsonl', '\n{"a":1}\n   \n\n{"a":2}\n\n');
  const records = await readAll(file);
  assert.deepEqual(
    records.map((r) => [r.line, r.value]),
    [
      [2, { a: 1 }],
      [5, { a: 2 }],
    ],
  );
});

test('a bad line in the middle names file and line and is not torn', async () => {
  const file = await fileWith('bad.jsonl', '{"a":1}\n{"a":\n{"a":3}\n');
  const err = await readError(file);
  assert.equal(err.file, file);
  assert.equal(err.line, 2);
  assert.equal(err.torn, false);
  assert.match(err.message, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: invalid JSON`));
});

test('an unterminated unparseable last line is reported as torn, or dropped when allowed', async () => {
  const file = await fileWith('torn.jsonl', '{"a":1}\n{"a":2}\n{"a":3, "b": [1, 2');
  const err = await readError(file);
  assert.equal(err.line, 3);
  assert.equal(err.torn, true);
  assert.match(err.reason, /torn last line/);
  const records = await readAll(file, { allowTornTail: true });
  assert.deepEqual(
    records.map((r) => r.value),
    [{ a: 1 }, { a: 2 }],
  );
});

test('a bad terminated last line is a bad line, not a torn one, even with allowTornTail', async () => {
  const file = await fileWith('badlast.jsonl', '{"a":1}\n{"a":\n');
  const err = await readError(file, { allowTornTail: true });
  assert.equal(err.line, 2);
  assert.equal(err.torn, false);
});

test('a valid last line without trailing newline is read (upstream workplace_assistant files end so)', async () => {
  const file = path.join(fixturesDir, 'gym/workplace_assistant/example.jsonl');
  const bytes = await readFile(file);
  assert.notEqual(bytes[bytes.length - 1], 0x0a);
  const records = await readAll(file);
  assert.equal(records.length, 5);
  const last = records[4]!;
  assert.equal(last.byteOffset + last.byteLength, bytes.length);
});

test('a 12 MB line streams through', async () => {
  const big = 'x'.repeat(12 * 1024 * 1024);
  const file = await fileWith('big.jsonl', `{"n":1}\n${JSON.stringify({ big })}\n{"n":3}\n`);
  const records = await readAll(file);
  assert.equal(records.length, 3);
  assert.equal((records[1]?.value as { big: string }).big.length, big.length);
  assert.equal(records[2]?.line, 3);
  assert.equal(records[2]?.byteOffset, 8 + JSON.stringify({ big }).length + 1);
});

test('multi-byte UTF-8 characters split across read chunks decode intact', async () => {
  // Pad so a 4-byte emoji and a 3-byte CJK char straddle read-chunk boundaries.
  const emoji = '😀';
  const prefix = '{"s":"';
  const pad = 'a'.repeat(READ_CHUNK_BYTES - prefix.length - 2);
  const value = `${pad}${emoji}${'b'.repeat(READ_CHUNK_BYTES - 3)}漢字é`;
  const file = await fileWith('utf8.jsonl', `${JSON.stringify({ s: value })}\n{"t":"ü"}\n`);
  const records = await readAll(file);
  assert.equal((records[0]?.value as { s: string }).s, value);
  assert.deepEqual(records[1]?.value, { t: 'ü' });
  assert.equal(records[1]?.byteOffset, Buffer.byteLength(JSON.stringify({ s: value })) + 1);
});

test('invalid UTF-8 is an error naming the line', async () => {
  const file = await fileWith(
    'latin1.jsonl',
    Buffer.concat([Buffer.from('{"a":1}\n{"a":"'), Buffer.from([0xe9]), Buffer.from('"}\n')]),
  );
  const err = await readError(file);
  assert.equal(err.line, 2);
  assert.match(err.reason, /UTF-8/);
});

test('CRLF line endings are accepted and counted in byteLength', async () => {
  const file = await fileWith('crlf.jsonl', '{"a":1}\r\n\r\n{"a":2}\r\n');
  const records = await readAll(file);
  assert.deepEqual(
    records.map((r) => [r.value, r.line, r.byteOffset, r.byteLength, r.text]),
    [
      [{ a: 1 }, 1, 0, 9, '{"a":1}'],
      [{ a: 2 }, 3, 11, 9, '{"a":2}'],
    ],
  );
});

test('start/end read a byte slice with line numbers from firstLine', async () => {
  const lines = ['{"i":0}', '{"i":1}', '{"i":2}', '{"i":3}'];
  const file = await fileWith('slice.jsonl', lines.map((l) => `${l}\n`).join(''));
  const all = await readAll(file);
  const slice = await readAll(file, { start: all[1]!.byteOffset, end: all[3]!.byteOffset, firstLine: 2 });
  assert.deepEqual(
    slice.map((r) => [r.value, r.line, r.byteOffset]),
    [
      [{ i: 1 }, 2, 8],
      [{ i: 2 }, 3, 16],
    ],
  );
  const broken = await fileWith('slicebad.jsonl', '{"i":0}\n{"i":1}\n{oops}\n');
  const err = await readError(broken, { start: 8, firstLine: 2 });
  assert.equal(err.line, 3);
});

test('jsonLine is JSON plus newline', () => {
  assert.equal(jsonLine({ a: [1, 'é'] }), '{"a":[1,"é"]}\n');
});

test('JsonlWriter writes, appends, counts bytes and survives backpressure', async () => {
  const file = path.join(dir, 'writer.jsonl');
  const writer = await JsonlWriter.open(file);
  const payload = 'é'.repeat(50_000);
  for (let i = 0; i < 200; i++) await writer.write({ i, payload });
  await writer.close();
  assert.equal(writer.bytesWritten, (await stat(file)).size);

  const appender = await JsonlWriter.open(file, { append: true });
  assert.equal(appender.bytesWritten, (await stat(file)).size);
  await appender.write({ i: 200 });
  await appender.close();
  assert.equal(appender.bytesWritten, (await stat(file)).size);

  const records = await readAll(file);
  assert.equal(records.length, 201);
  assert.deepEqual(
    records.map((r) => (r.value as { i: number }).i),
    Array.from({ length: 201 }, (_, i) => i),
  );
});

test('JsonlWriter: lines from concurrent writers batched in one tick reach the file whole, in call order, before the next tick', async () => {
  const file = path.join(dir, 'batched.jsonl');
  const writer = await JsonlWriter.open(file);
  // Sixteen lanes, each writing without awaiting I/O in between, as a chunk's rows finish together.
  await Promise.all(
    Array.from({ length: 16 }, (_, lane) =>
      (async () => {
        for (let i = 0; i < 50; i++) await writer.write({ lane, i, pad: 'x'.repeat(3000) });
      })(),
    ),
  );
  // Handed to the file by the next tick, without close(): a killed worker loses no line it was told is written.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal((await stat(file)).size, writer.bytesWritten);
  const records = await readAll(file);
  assert.equal(records.length, 16 * 50);
  for (let lane = 0; lane < 16; lane++) {
    const order = records
      .map((r) => r.value as { lane: number; i: number })
      .filter((v) => v.lane === lane)
      .map((v) => v.i);
    assert.deepEqual(
      order,
      Array.from({ length: 50 }, (_, i) => i),
    );
  }
  // A write and a close in the same tick still lands.
  void writer.write({ last: true });
  await writer.close();
  assert.deepEqual((await readAll(file)).at(-1)?.value, { last: true });
});

test('JsonlWriter.open fails for a missing directory', async () => {
  await assert.rejects(JsonlWriter.open(path.join(dir, 'no/such/dir/x.jsonl')), /ENOENT/);
});

test('truncateTornTail drops only an unterminated tail', async () => {
  const torn = await fileWith('tt1.jsonl', '{"a":1}\n{"a":2}\n{"a":3');
  assert.equal(await truncateTornTail(torn), 6);
  assert.equal(await readFile(torn, 'utf8'), '{"a":1}\n{"a":2}\n');
  assert.equal(await truncateTornTail(torn), 0);

  const longTail = await fileWith('tt2.jsonl', `{"a":1}\n${'y'.repeat(200_000)}`);
  assert.equal(await truncateTornTail(longTail), 200_000);
  assert.equal(await readFile(longTail, 'utf8'), '{"a":1}\n');

  const onlyTail = await fileWith('tt3.jsonl', '{"a":');
  assert.equal(await truncateTornTail(onlyTail), 5);
  assert.equal((await stat(onlyTail)).size, 0);

  const empty = await fileWith('tt4.jsonl', '');
  assert.equal(await truncateTornTail(empty), 0);
});
