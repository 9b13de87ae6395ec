// Reads a JSONL file the way Python's text mode does (universal newlines): a line ends at LF, CRLF
// or a lone CR, and the text handed on carries a single "\n" if it had any terminator. Bytes are
// split before decoding, which is safe in UTF-8 (CR and LF never occur inside a multi-byte
// sequence), lets a bad byte be blamed on its line and lets each thread decode its own lines.
//
// A file is read in byte ranges, so that threads can each take one without seeing the rest: the
// lines of a range are those whose first byte lies in it. A line starts at offset 0 and right after
// a terminator, so from any offset the next start is found without reading what came before, bar
// one byte: the byte before a range says whether its first byte starts a line (after LF or a lone
// CR) or is the LF of a CRLF.
import { isAscii, isUtf8 } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { growScanBuffer, scanBuffer } from './strictJson';

const LF = 0x0a;
const CR = 0x0d;
/** The first read of a range; a buffer grows past it only for a line that does not fit. */
const READ_BYTES = 1 << 20;

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

/** One line as a visitor sees it: its bytes are `buffer[start, end)`, without the terminator.
 * One object serves every line of a range, and the buffer is reused once the visit returns. */
export interface LineSpan {
  buffer: Buffer;
  start: number;
  end: number;
  terminated: boolean;
  /** Where the line starts in the file. */
  offset: number;
  /** Whether the bytes are UTF-8. */
  utf8: boolean;
}

export type LineVisitor = (line: LineSpan) => void;

/** A window of a buffer, without copying (for the checks that take a whole typed array). */
const view = (buffer: Buffer, start: number, end: number) =>
  new Uint8Array(buffer.buffer, buffer.byteOffset + start, end - start);

/** One open JSONL file, read with positioned reads into one reused buffer, which the strict-JSON
 * scanner reads lines in place in (see scanBuffer). */
export class JsonlFile {
  readonly size: number;
  private readonly fd: number;
  private buffer: Buffer;
  /** The file offset of buffer[0], and how many bytes from there the buffer holds. */
  private base = 0;
  private filled = 0;
  private atEnd = false;

  /** `readBytes`: the size of each read (smaller in tests, to cross many read boundaries). */
  constructor(path: string, readBytes = READ_BYTES) {
    this.buffer = scanBuffer(readBytes);
    this.fd = openSync(path, 'r');
    try {
      this.size = fstatSync(this.fd).size;
    } catch (error) {
      closeSync(this.fd);
      throw error;
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  /** The bytes of `length` at `offset`, in a buffer of their own. */
  read(offset: number, length: number): Buffer {
    const bytes = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const read = readSync(this.fd, bytes, done, length - done, offset + done);
      if (read === 0) break;
      done += read;
    }
    return done === length ? bytes : bytes.subarray(0, done);
  }

  /** Starts the buffer at file offset `from`. */
  private seek(from: number): void {
    this.base = from;
    this.filled = 0;
    this.atEnd = false;
    this.utf8Until = -1;
  }

  /** Keeps the bytes from buffer index `keep` on (moved to the front, the buffer grown when they
   * fill it) and reads more after them. */
  private refill(keep: number): void {
    this.buffer.copyWithin(0, keep, this.filled);
    this.base += keep;
    this.filled -= keep;
    if (this.filled === this.buffer.length) this.buffer = growScanBuffer(this.buffer, this.buffer.length * 2);
    const read = readSync(this.fd, this.buffer, this.filled, this.buffer.length - this.filled, this.base + this.filled);
    if (read === 0) this.atEnd = true;
    this.filled += read;
    this.utf8Until = -1;
  }

  /** The line handed to visitors, refilled for each. */
  private readonly span: LineSpan = {
    buffer: Buffer.alloc(0),
    start: 0,
    end: 0,
    terminated: false,
    offset: 0,
    utf8: false,
  };
  /** Up to where the buffer is known to be UTF-8, from the first line visited since the last read
   * (-1: not checked yet). One check of all the lines read costs far less than one per line. */
  private utf8Until = -1;

  private visitLine(visit: LineVisitor, start: number, end: number, terminated: boolean): void {
    const buffer = this.buffer;
    if (this.utf8Until === -1) {
      const lastBreak = Math.max(buffer.lastIndexOf(LF, this.filled - 1), buffer.lastIndexOf(CR, this.filled - 1));
      const checked = lastBreak < start ? this.filled : lastBreak + 1;
      this.utf8Until = isUtf8(view(buffer, start, checked)) ? checked : start;
    }
    const span = this.span;
    span.buffer = buffer;
    span.start = start;
    span.end = end;
    span.terminated = terminated;
    span.offset = this.base + start;
    span.utf8 = end <= this.utf8Until || isUtf8(view(buffer, start, end));
    visit(span);
  }

  /**
   * Calls `visit` for every line that starts in [from, to), in order, and returns how many there
   * were. The last of them is read to its end, however far past `to` that is.
   */
  lines(from: number, to: number, visit: LineVisitor): number {
    if (from >= to) return 0;
    // From the byte before `from`, the first line seen is the tail of one that started earlier: it
    // is passed over, and the line after it is the first that starts at or after `from`.
    let skipping = from > 0;
    this.seek(skipping ? from - 1 : 0);
    let count = 0;
    let start = 0;
    // The next LF and CR at or after `start` (-1: none in the buffer; -2: not looked for yet).
    let nextLf = -2;
    let nextCr = -2;
    for (;;) {
      const buffer = this.buffer;
      if (nextLf !== -1 && nextLf < start) nextLf = buffer.indexOf(LF, start);
      if (nextCr !== -1 && nextCr < start) nextCr = buffer.indexOf(CR, start);
      // indexOf searches the whole buffer, including bytes past `filled` left by an earlier read.
      if (nextLf >= this.filled) nextLf = -1;
      if (nextCr >= this.filled) nextCr = -1;
      const at = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr);
      // A CR at the end of what is read may be the first half of a CRLF: read on before deciding.
      if (at === -1 || (at === nextCr && at + 1 === this.filled && !this.atEnd)) {
        if (at === -1 && this.atEnd) {
          if (!skipping && start < this.filled) {
            this.visitLine(visit, start, this.filled, false);
            count++;
          }
          return count;
        }
        // No terminator here: a line passed over runs past `to`, so none starts in the range.
        if (at === -1 && skipping && this.base + this.filled >= to) return count;
        this.refill(start);
        start = 0;
        nextLf = -2;
        nextCr = -2;
        continue;
      }
      let next = at + 1;
      if (at === nextCr && next < this.filled && buffer[next] === LF) next++;
      if (!skipping) {
        this.visitLine(visit, start, at, true);
        count++;
      }
      skipping = false;
      start = next;
      if (this.base + start >= to) return count;
    }
  }
}
