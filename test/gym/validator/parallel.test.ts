import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { validatePivotDataset, type PivotValidatorResult } from '../../../gym/validator';
import { CHUNK_BYTES } from '../../../gym/validator/chunks';
import { ChunkThreads } from '../../../gym/validator/parallel';
import { built } from '../../../bin/built';

// Threads split the file at fixed byte offsets; whatever falls on a cut, and wherever the exact path
// is needed, every thread count must print what one thread prints.

const workerScript = built('validatorWorker.js');

const ROW = JSON.stringify({
  responses_create_params: {
    input: [{ role: 'user', content: 'hi' }],
    tools: [{ type: 'function', name: 'get_weather' }],
    tool_choice: 'auto',
  },
  expected_action: { type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}' },
  agent_ref: { type: 'responses_api_agents', name: 'weather_agent' },
});
/** Valid for CPython (NaN is a float to it) but not strict JSON: only the exact path accepts it. */
const EXACT_ONLY_ROW = ROW.replace('"tool_choice":"auto"', '"tool_choice":"auto","temperature":NaN');

/** A file written line by line, knowing each line's number and where the next byte lands. */
class Layout {
  private readonly parts: string[] = [];
  bytes = 0;
  lines = 0;

  /** Adds a line; returns its number. */
  line(text: string, terminator = '\n'): number {
    this.parts.push(text + terminator);
    this.bytes += Buffer.byteLength(text + terminator);
    return ++this.lines;
  }

  /** Adds a valid row, padded with spaces so that its terminator starts at byte `at`. */
  rowEndingAt(at: number, terminator: string): number {
    const pad = at - this.bytes - ROW.length;
    assert.ok(pad >= 0, `no room before ${at}`);
    return this.line(ROW + ' '.repeat(pad), terminator);
  }

  text(): string {
    return this.parts.join('');
  }
}

/** Rows across five chunks, with a different line break on each cut; `late` goes in the fourth. */
function layout(late: string): { text: string; lateLine: number } {
  const file = new Layout();
  file.line(ROW);
  file.line(EXACT_ONLY_ROW, '\r\n');
  file.line('   ');
  file.rowEndingAt(CHUNK_BYTES - 1, '\r\n'); // a CRLF split by the first cut
  file.line(EXACT_ONLY_ROW, '\r');
  file.rowEndingAt(2 * CHUNK_BYTES - 1, '\r'); // a lone CR just before the second cut
  file.line(ROW);
  file.line(EXACT_ONLY_ROW);
  // A row longer than a chunk: the third chunk holds no line start at all.
  file.line(ROW + ' '.repeat(CHUNK_BYTES + 4096), '\r\n');
  file.rowEndingAt(4 * CHUNK_BYTES - 1, '\n'); // a line starting exactly on the fourth cut
  file.line(ROW, '\r\n');
  const lateLine = file.line(late, '\r\n');
  file.line(EXACT_ONLY_ROW, '\r');
  while (file.bytes < 4.5 * CHUNK_BYTES) file.line(ROW);
  file.line('\r\n'.repeat(3) + ROW, '');
  return { text: file.text(), lateLine };
}

async function validateWithThreads(file: string): Promise<PivotValidatorResult> {
  const one = await validatePivotDataset({ path: file, threads: 1 });
  for (const threads of [2, 3])
    assert.deepEqual(await validatePivotDataset({ path: file, threads, workerScript }), one, `${threads} threads`);
  return one;
}

test('whatever line break falls on a cut, threads count and check every line as one thread does', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-threads-'));
  try {
    const file = path.join(dir, 'rows.jsonl');
    const valid = layout(ROW);
    await writeFile(file, valid.text);
    const result = await validateWithThreads(file);
    const lines = valid.text.split(/\r\n|\r|\n/).length;
    // Every line is a row bar the blank ones: the one of spaces and the three empty ones at the end.
    const rows = lines - 4;
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`^rows: ${rows}\\n`));

    // A failure in a later chunk, after lines that took the exact path in the earlier ones.
    for (const [late, message] of [
      ['[]', 'row must be an object'],
      ['{"agent_ref": 1', 'invalid JSON: '],
    ] as const) {
      const failing = layout(late);
      await writeFile(file, failing.text);
      const failed = await validateWithThreads(file);
      assert.equal(failed.exitCode, 1);
      assert.ok(failed.stderr.startsWith(`validation failed: line ${failing.lateLine}: ${message}`), failed.stderr);
    }

    const badUtf8 = layout(ROW);
    await writeFile(file, Buffer.concat([Buffer.from(badUtf8.text), Buffer.from([0x0a, 0xc3, 0x28])]));
    assert.equal((await validateWithThreads(file)).stderr, `validation failed: line ${lines + 1}: not valid UTF-8\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('threads started ahead on a guessed job are kept only for that job: a wrong guess never shows', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-started-'));
  try {
    const file = path.join(dir, 'rows.jsonl');
    // The first row's expected tool is not offered: the checks reject it, unless told not to check
    // tool names.
    const unoffered = ROW.replace('"name":"get_weather","arguments"', '"name":"get_time","arguments"');
    await writeFile(file, `${unoffered}\n${layout(ROW).text}`);
    const one = await validatePivotDataset({ path: file, threads: 1 });
    assert.match(one.stderr, /^validation failed: line 1: expected_action uses tools absent/);
    const { size: fileSize } = await stat(file);
    const options = { agentRef: undefined, requireFields: [], requireAnyFields: [], checkToolNames: true };
    const guesses = [
      { name: 'right', options, threads: 2, kept: true },
      { name: 'other options', options: { ...options, checkToolNames: false }, threads: 2, kept: false },
      { name: 'other thread count', options, threads: 3, kept: false },
    ];
    for (const guess of guesses) {
      const started = new ChunkThreads({ path: file, fileSize, options: guess.options }, guess.threads, workerScript);
      assert.equal(started.runs({ path: file, fileSize, options }, 2), guess.kept, guess.name);
      // The first chunk is the guess's: a worker claimed it before the validator started.
      while (!started.has(0)) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.deepEqual(await validatePivotDataset({ path: file, threads: 2, workerScript, started }), one, guess.name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
