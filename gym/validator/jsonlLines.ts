// Streams a JSONL file the way Python's text mode reads it (universal newlines): a line ends at LF,
// CRLF or a lone CR, and the line handed on carries a single "\n" if it had any terminator. Bytes
// are split before decoding, which is safe in UTF-8 (CR and LF never occur inside a multi-byte
// sequence), lets a bad byte be blamed on its line and lets worker threads do the decoding. Lines
// come out in batches, one per read chunk: an async step per line costs more than a short row.
import { isAscii } from 'node:buffer';
import { createReadStream } from 'node:fs';

const LF = 0x0a;
const CR = 0x0d;
/** Big enough to keep per-read overhead low, small enough that memory stays flat. */
const CHUNK_BYTES = 1 << 20;

export interface RawLine {
  /** 1-based physical line number. */
  lineNumber: number;
  /** The line's bytes without its terminator. */
  bytes: Buffer;
  terminated: boolean;
}

export class InvalidUtf8Error extends Error {
  constructor(readonly lineNumber: number) {
    super(`line ${lineNumber}: not valid UTF-8`);
    this.name = 'InvalidUtf8Error';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text the reference decodes: the line plus "\n" when it was terminated; a BOM is kept.
 * Undefined when the bytes are not UTF-8. */
export function decodeLineBytes(bytes: Uint8Array, terminated: boolean): string | undefined {
  let content: string;
  // Most lines are ASCII, for which Latin-1 gives the same text with no UTF-8 decoding at all
  // (and a one-byte string, which JSON.parse reads faster).
  if (isAscii(bytes)) {
    content = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  } else {
    try {
      content = utf8.decode(bytes);
    } catch {
      return undefined;
    }
  }
  return terminated ? content + '\n' : content;
}

export function decodeLine(line: RawLine): string {
  const text = decodeLineBytes(line.bytes, line.terminated);
  if (text === undefined) throw new InvalidUtf8Error(line.lineNumber);
  return text;
}

/** Finds line breaks with Buffer.indexOf (native) and remembers where the next CR and LF are,
 * since most files have no CR at all. */
class BreakFinder {
  private nextLf = -1;
  private nextCr = -1;

  constructor(private readonly chunk: Buffer) {
    this.nextLf = chunk.indexOf(LF);
    this.nextCr = chunk.indexOf(CR);
  }

  next(from: number): number {
    if (this.nextLf !== -1 && this.nextLf < from) this.nextLf = this.chunk.indexOf(LF, from);
    if (this.nextCr !== -1 && this.nextCr < from) this.nextCr = this.chunk.indexOf(CR, from);
    if (this.nextLf === -1) return this.nextCr;
    if (this.nextCr === -1) return this.nextLf;
    return Math.min(this.nextLf, this.nextCr);
  }
}

export async function* readJsonlLineBatches(path: string): AsyncGenerator<RawLine[]> {
  let lineNumber = 0;
  let partial: Buffer[] = [];
  // A CR that ended the previous chunk: if the next chunk starts with LF, the two are one break.
  let skipLeadingLf = false;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    const lines: RawLine[] = [];
    let start = 0;
    if (skipLeadingLf && chunk.length > 0 && chunk[0] === LF) start = 1;
    skipLeadingLf = false;
    const breaks = new BreakFinder(chunk);
    for (let at = breaks.next(start); at !== -1; at = breaks.next(start)) {
      const piece = chunk.subarray(start, at);
      lines.push({ lineNumber: ++lineNumber, bytes: partial.length > 0 ? Buffer.concat([...partial, piece]) : piece, terminated: true });
      partial = [];
      start = at + 1;
      if (chunk[at] === CR) {
        if (start < chunk.length) {
          if (chunk[start] === LF) start++;
        } else {
          skipLeadingLf = true;
        }
      }
    }
    if (start < chunk.length) partial.push(chunk.subarray(start));
    if (lines.length > 0) yield lines;
  }
  if (partial.length > 0) yield [{ lineNumber: ++lineNumber, bytes: Buffer.concat(partial), terminated: false }];
}
