// Streams a JSONL file line by line the way Python's text mode reads it (universal newlines): a
// line ends at LF, CRLF or a lone CR, and the line handed on carries a single "\n" if it had any
// terminator. Bytes are split before decoding, which is safe in UTF-8 (CR and LF never occur inside
// a multi-byte sequence) and lets a bad byte be blamed on its line.
import { createReadStream } from 'node:fs';

const LF = 0x0a;
const CR = 0x0d;
/** Big enough to keep per-read overhead low, small enough that memory stays flat. */
const CHUNK_BYTES = 1 << 20;

export interface JsonlLine {
  /** 1-based physical line number. */
  lineNumber: number;
  /** Decoded line content plus "\n" when the line was terminated; a leading BOM is kept. */
  text: string;
}

export class InvalidUtf8Error extends Error {
  constructor(readonly lineNumber: number) {
    super(`line ${lineNumber}: not valid UTF-8`);
    this.name = 'InvalidUtf8Error';
  }
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

export async function* readJsonlLines(path: string): AsyncGenerator<JsonlLine> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let lineNumber = 0;
  const decode = (bytes: Uint8Array, terminated: boolean): JsonlLine => {
    lineNumber++;
    let content: string;
    try {
      content = decoder.decode(bytes);
    } catch {
      throw new InvalidUtf8Error(lineNumber);
    }
    return { lineNumber, text: terminated ? content + '\n' : content };
  };
  let partial: Buffer[] = [];
  // A CR that ended the previous chunk: if the next chunk starts with LF, the two are one break.
  let skipLeadingLf = false;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    let start = 0;
    if (skipLeadingLf && chunk.length > 0 && chunk[0] === LF) start = 1;
    skipLeadingLf = false;
    const breaks = new BreakFinder(chunk);
    for (let at = breaks.next(start); at !== -1; at = breaks.next(start)) {
      const piece = chunk.subarray(start, at);
      const bytes = partial.length > 0 ? Buffer.concat([...partial, piece]) : piece;
      partial = [];
      yield decode(bytes, true);
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
  }
  if (partial.length > 0) yield decode(Buffer.concat(partial), false);
}
