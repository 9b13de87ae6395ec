import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { JsonlFile } from '../../../gym/validator/jsonlLines';
import { random } from '../../helpers/random';

interface Line {
  offset: number;
  text: string;
  terminated: boolean;
  utf8: boolean;
}

/** Python's universal newlines, the slow obvious way: LF, CRLF or a lone CR end a line. */
function referenceLines(bytes: Buffer): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (let at = 0; at < bytes.length; at++) {
    if (bytes[at] !== 0x0a && bytes[at] !== 0x0d) continue;
    const piece = bytes.subarray(start, at);
    lines.push({
      offset: start,
      text: piece.toString('latin1'),
      terminated: true,
      utf8: Buffer.from(piece.toString('utf8')).equals(piece),
    });
    if (bytes[at] === 0x0d && bytes[at + 1] === 0x0a) at++;
    start = at + 1;
  }
  if (start < bytes.length) {
    const piece = bytes.subarray(start);
    lines.push({
      offset: start,
      text: piece.toString('latin1'),
      terminated: false,
      utf8: Buffer.from(piece.toString('utf8')).equals(piece),
    });
  }
  return lines;
}

function readLines(file: JsonlFile, from: number, to: number): Line[] {
  const lines: Line[] = [];
  const count = file.lines(from, to, (line) => {
    lines.push({
      offset: line.offset,
      text: line.buffer.toString('latin1', line.start, line.end),
      terminated: line.terminated,
      utf8: line.utf8,
    });
  });
  assert.equal(count, lines.length);
  return lines;
}

async function withFile<T>(bytes: Buffer, run: (file: string) => T): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-jsonl-lines-'));
  try {
    const file = path.join(dir, 'rows.jsonl');
    await writeFile(file, bytes);
    return run(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const PIECES = ['{"a": 1}', 'x', '', 'caf\u00e9', '\u00e9\u00e9\u00e9', ' ', '\u2028'];
const BREAKS = ['\n', '\r\n', '\r', '\r\r', '\n\n', '\r\n\r\n'];

function generated(next: () => number, lines: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < lines; i++) {
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
    parts.push(Buffer.from(pick(PIECES).repeat(1 + Math.floor(next() * 6))));
    // A bad byte here and there, so some lines are not UTF-8.
    if (next() < 0.05) parts.push(Buffer.from([0xc3]));
    if (i < lines - 1 || next() < 0.5) parts.push(Buffer.from(pick(BREAKS)));
  }
  return Buffer.concat(parts);
}

test('the ranges cut anywhere give every line once, as universal newlines split them, with its offset', async () => {
  const next = random(99);
  for (let round = 0; round < 20; round++) {
    const bytes = generated(next, 1 + Math.floor(next() * 60));
    const expected = referenceLines(bytes);
    await withFile(bytes, (name) => {
      // Reads of a few bytes: lines cross read boundaries and outgrow the buffer.
      const file = new JsonlFile(name, 1 + Math.floor(next() * 16));
      try {
        assert.deepEqual(readLines(file, 0, file.size), expected);
        for (let cut = 0; cut <= bytes.length; cut++) {
          assert.deepEqual(
            [...readLines(file, 0, cut), ...readLines(file, cut, file.size)],
            expected,
            `cut at ${cut} of ${JSON.stringify(bytes.toString('latin1'))}`,
          );
        }
        const thirds = [0, Math.floor(bytes.length / 3), Math.floor((2 * bytes.length) / 3), bytes.length];
        assert.deepEqual(
          thirds.slice(1).flatMap((to, i) => readLines(file, thirds[i] as number, to)),
          expected,
        );
      } finally {
        file.close();
      }
    });
  }
});

test('a range that only holds the middle of a long line has no lines', async () => {
  const bytes = Buffer.from(`a\n${'x'.repeat(5000)}\r\nb`);
  await withFile(bytes, (name) => {
    const file = new JsonlFile(name, 64);
    try {
      assert.deepEqual(readLines(file, 100, 4000), []);
      assert.deepEqual(
        readLines(file, 2, 3).map((line) => line.text.length),
        [5000],
      );
      assert.deepEqual(
        readLines(file, 3, file.size).map((line) => line.text),
        ['b'],
      );
    } finally {
      file.close();
    }
  });
});

test('read() gives a line back by its offset and length', async () => {
  await withFile(Buffer.from('first\r\nsecond\nthird'), (name) => {
    const file = new JsonlFile(name);
    try {
      assert.equal(file.read(7, 6).toString(), 'second');
      assert.equal(file.read(14, 5).toString(), 'third');
    } finally {
      file.close();
    }
  });
});
