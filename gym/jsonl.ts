import { createWriteStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { JsonlError } from './errors';
import { namedFileError, onFile } from './fileError';
import { orjsonDumps } from './pythonJsonDumps';

// JSONL as NeMo Gym reads and writes it: one JSON value per `\n`-terminated UTF-8 line. Reading
// streams line by line so memory follows the longest line, not the file, and a byte range can be
// read on its own so chunk activities seek through an offsets index instead of rescanning.

export interface JsonlRecord {
  value: unknown;
  /** 1-based line number in the file. */
  line: number;
  /** Byte offset of the start of the line. */
  byteOffset: number;
  /** Bytes of the line including its terminator. */
  byteLength: number;
  /** The line as read, without its terminator (always set by readJsonl): materialization keys
   * duplicate detection on it, and number kinds JSON.parse lost are read from it (gym/kindedJson.ts). */
  text?: string;
}

export interface ReadJsonlOptions {
  /** Byte offset to start reading at; must be the start of a line. */
  start?: number;
  /** Byte offset to stop reading at (exclusive); must be the end of a line or the end of the file. */
  end?: number;
  /** Line number of the line at `start`, for error messages and `JsonlRecord.line`. */
  firstLine?: number;
  /** Drop a torn last line silently instead of throwing, as a resumed shard must. */
  allowTornTail?: boolean;
}

// Rollout lines run to several KB; a large read hands out many lines per await and splits few lines
// across reads. The buffer is per open reader (no larger than its byte range), and readers are few.
export const READ_CHUNK_BYTES = 1 << 20;
/** A torn tail is at most one line: scanning back for it reads small pieces. */
const TAIL_SCAN_BYTES = 1 << 16;
/** Bytes a writer may hold before `write` waits for the file to catch up. */
const WRITE_BUFFER_BYTES = 1 << 20;
const NEWLINE = 0x0a;

// `fatal` turns invalid UTF-8 into an error naming the line instead of silent U+FFFD damage.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A line's bytes (without its `\n`) as readLines gives its text: a CR before the `\n` dropped, invalid UTF-8 an error. */
export function decodeLine(bytes: Buffer, file: string, line: number): string {
  try {
    const text = utf8.decode(bytes);
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  } catch {
    throw new JsonlError(file, line, 'invalid UTF-8');
  }
}

function parseLine(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, reason: `invalid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** One line of a JSONL file as text, before any JSON is read from it. */
export interface JsonlLine {
  /** The line without its terminator (and without a CR before it). */
  text: string;
  line: number;
  byteOffset: number;
  /** Bytes of the line including its terminator. */
  byteLength: number;
  terminated: boolean;
}

/**
 * The lines of a file (or of a byte range of it) as text, blank ones included. For files whose
 * lines are read for a few fields or copied through as they are, where decoding every line's JSON
 * would cost more than the rest of the work.
 */
export async function* readLines(
  file: string,
  opts: Pick<ReadJsonlOptions, 'start' | 'end' | 'firstLine'> = {},
): AsyncGenerator<JsonlLine> {
  const start = opts.start ?? 0;
  const handle = await open(file, 'r');
  try {
    const end = opts.end ?? (await handle.stat()).size;
    let line = opts.firstLine ?? 1;
    let lineStart = start;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let position = start;
    const buf = Buffer.allocUnsafe(Math.max(1, Math.min(READ_CHUNK_BYTES, end - start)));

    const finishLine = (bytes: Buffer, terminated: boolean): JsonlLine => {
      const record = {
        text: decodeLine(bytes, file, line),
        line,
        byteOffset: lineStart,
        byteLength: bytes.length + (terminated ? 1 : 0),
        terminated,
      };
      line++;
      lineStart += record.byteLength;
      return record;
    };

    while (position < end) {
      const { bytesRead } = await handle.read(buf, 0, Math.min(READ_CHUNK_BYTES, end - position), position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const chunk = buf.subarray(0, bytesRead);
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
        const piece = chunk.subarray(from, nl);
        const bytes = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece], pendingBytes + piece.length);
        pending = [];
        pendingBytes = 0;
        from = nl + 1;
        yield finishLine(bytes, true);
      }
      if (from < bytesRead) {
        // Copied because `buf` is reused by the next read.
        pending.push(Buffer.from(chunk.subarray(from)));
        pendingBytes += bytesRead - from;
      }
    }
    if (pendingBytes > 0) yield finishLine(Buffer.concat(pending, pendingBytes), false);
  } finally {
    await handle.close();
  }
}

export async function* readJsonl(file: string, opts: ReadJsonlOptions = {}): AsyncGenerator<Required<JsonlRecord>> {
  for await (const { text, line, byteOffset, byteLength, terminated } of readLines(file, opts)) {
    if (text.trim() === '') continue;
    const parsed = parseLine(text);
    if (parsed.ok) {
      yield { value: parsed.value, line, byteOffset, byteLength, text };
      continue;
    }
    if (terminated) throw new JsonlError(file, line, parsed.reason);
    if (opts.allowTornTail) continue;
    throw new JsonlError(file, line, `torn last line (no trailing newline), ${parsed.reason}`, true);
  }
}

// JSON.stringify writes a plain value (see kindedJson.ts) as orjson does, but for floats in
// [1e-6, 1e-5), which orjson writes with an exponent (`1e-6`); a hit elsewhere (inside a string,
// `10.000001`) only costs the slower writer. A PyDict needs that writer anyway: JSON.stringify
// knows no Python floats.
const ORJSON_EXPONENT_RANGE = /0\.00000[1-9]/;

/** `orjson.dumps(value)` of a plain value or a PyDict: a JSONL line as NeMo Gym writes it, without its `\n`. */
export function jsonText(value: unknown): string {
  if (value instanceof Map) return orjsonDumps(value);
  if (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).some((v) => v instanceof Map)
  ) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  }
  const text = JSON.stringify(value);
  return ORJSON_EXPONENT_RANGE.test(text) ? orjsonDumps(value) : text;
}

/** One line as NeMo Gym writes its JSONL, `orjson.dumps(value) + b"\n"`, of a plain value or a PyDict. */
export function jsonLine(value: unknown): string {
  return `${jsonText(value)}\n`;
}

/**
 * Appends JSON lines through a buffered stream, waiting for `drain` so a fast producer cannot balloon
 * memory. Lines written in the same tick go to the file in one write: the stream is corked on the
 * first and uncorked on the next tick, so no line waits in memory past the current tick, but a
 * loop of writes costs one system call instead of one per line.
 */
export class JsonlWriter {
  bytesWritten: number;
  private readonly stream: WriteStream;
  private failure: Error | undefined;
  private drained: Promise<void> | undefined;
  private corked = false;

  private constructor(stream: WriteStream, initialBytes: number) {
    this.stream = stream;
    this.bytesWritten = initialBytes;
    stream.on('error', (err) => {
      this.failure = namedFileError(err, String(stream.path));
    });
  }

  /** `bytesWritten` starts at the current file size when appending, so it is always an offset into the file. */
  static async open(file: string, opts: { append?: boolean } = {}): Promise<JsonlWriter> {
    const stream = createWriteStream(file, { flags: opts.append ? 'a' : 'w', highWaterMark: WRITE_BUFFER_BYTES });
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    });
    let initialBytes = 0;
    if (opts.append) {
      const handle = await open(file, 'r');
      try {
        initialBytes = (await handle.stat()).size;
      } finally {
        await handle.close();
      }
    }
    return new JsonlWriter(stream, initialBytes);
  }

  async write(value: unknown): Promise<void> {
    await this.writeLine(jsonLine(value));
  }

  /** A line already serialized, `\n` included. */
  async writeLine(text: string): Promise<void> {
    if (this.failure) throw this.failure;
    const data = Buffer.from(text, 'utf8');
    this.bytesWritten += data.length;
    if (!this.corked) {
      this.corked = true;
      this.stream.cork();
      process.nextTick(() => {
        this.corked = false;
        this.stream.uncork();
      });
    }
    if (this.stream.write(data)) return;
    // Concurrent writers share one wait for 'drain' instead of each adding listeners to the stream.
    this.drained ??= new Promise<void>((resolve, reject) => {
      const onDrain = (): void => {
        this.stream.off('error', onError);
        this.drained = undefined;
        resolve();
      };
      const onError = (err: Error): void => {
        this.stream.off('drain', onDrain);
        this.drained = undefined;
        reject(namedFileError(err, String(this.stream.path)));
      };
      this.stream.once('drain', onDrain);
      this.stream.once('error', onError);
    });
    await this.drained;
  }

  async close(): Promise<void> {
    if (this.stream.closed) {
      if (this.failure) throw this.failure;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      this.stream.end((err?: Error | null) =>
        err ? reject(namedFileError(err, String(this.stream.path))) : resolve(),
      );
    });
    if (this.failure) throw this.failure;
  }
}

/**
 * Cuts an unterminated last line off a file we append to, returning the bytes removed. Any
 * unterminated tail goes, even one that parses: our writers end every line with `\n`, so a missing
 * one means the write was cut short, and appending after it would glue two records into one line.
 */
export async function truncateTornTail(file: string): Promise<number> {
  const handle = await open(file, 'r+');
  try {
    const size = (await handle.stat()).size;
    const buf = Buffer.allocUnsafe(TAIL_SCAN_BYTES);
    let keep = 0;
    for (let chunkEnd = size; chunkEnd > 0;) {
      const chunkStart = Math.max(0, chunkEnd - TAIL_SCAN_BYTES);
      const { bytesRead } = await handle.read(buf, 0, chunkEnd - chunkStart, chunkStart);
      const nl = buf.subarray(0, bytesRead).lastIndexOf(NEWLINE);
      if (nl !== -1) {
        keep = chunkStart + nl + 1;
        break;
      }
      chunkEnd = chunkStart;
    }
    if (keep < size) await onFile(file, () => handle.truncate(keep));
    return size - keep;
  } finally {
    await handle.close();
  }
}
