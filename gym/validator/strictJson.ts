// Strict JSON (the RFC 8259 grammar) checked on UTF-8 bytes without building anything: the part of
// the validator's fast path that reads the bulk of a row. The checking itself is WebAssembly
// (strictJson.wat, which says why); this module gives it the bytes to read: a buffer in the
// memory of a scanner instance of its own, which JsonlFile reads the file into, so a line is
// checked where it lies. Bytes of 0x80 and above are taken as string content; the caller checks
// UTF-8. A line is read where it lies in a larger buffer: nothing past its `end` is read.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MAX_NESTING_DEPTH as DEPTH_LIMIT } from '../pythonJson';

// A local copy: an import is read through a getter at each use, and this one is read per value.
const MAX_NESTING_DEPTH = DEPTH_LIMIT;

/** Returned instead of a position when the bytes are not strict JSON. */
export const FAILED = -1;

/** What strictJson.wat exports; positions are offsets into its memory, -1 for "not strict JSON". */
interface ScannerExports {
  plain_run(at: number, end: number): number;
  skip_string(at: number, end: number): number;
  skip_value(at: number, end: number, room: number): number;
}

/** The front of a scanner's memory, where skip_value keeps its stack of open containers (one byte
 * each, at most MAX_NESTING_DEPTH); the bytes it reads come after. */
const STACK_BYTES = 4096;
if (MAX_NESTING_DEPTH >= STACK_BYTES)
  throw new Error('strict JSON scanner: its stack is smaller than the nesting limit');
const PAGE_BYTES = 65536;

const WASM_FILE = 'strictJson.wasm';

/** Where the build put strictJson.wat assembled (`npm run build` writes dist/strictJson.wasm): this
 * module runs from its source (tests), from the CLI's bundle in dist/ and from the validator's
 * bundles there, so the file is looked for upward from here. */
function builtWasmFile(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const beside = path.basename(dir) === 'dist' ? path.join(dir, WASM_FILE) : path.join(dir, 'dist', WASM_FILE);
    if (existsSync(beside)) return beside;
    if (path.dirname(dir) === dir)
      throw new Error(`strict JSON scanner: no dist/${WASM_FILE} above ${__dirname}; run \`npm run build\``);
  }
}

let compiled: WebAssembly.Module | undefined;

/** The built scanner, compiled by V8 once per thread. */
function scannerModule(): WebAssembly.Module {
  if (compiled === undefined) compiled = new WebAssembly.Module(readFileSync(builtWasmFile()));
  return compiled;
}

/** An instance of strictJson.wat and the memory it reads. */
class WasmScanner {
  readonly memory: WebAssembly.Memory;
  readonly exports: ScannerExports;

  constructor(length: number) {
    this.memory = new WebAssembly.Memory({ initial: Math.ceil((STACK_BYTES + length) / PAGE_BYTES) });
    this.exports = new WebAssembly.Instance(scannerModule(), { strict_json: { memory: this.memory } })
      .exports as unknown as ScannerExports;
  }

  /** Its bytes, `length` of them: a view that growing the memory leaves empty (detached). */
  view(length: number): Buffer {
    const view = Buffer.from(this.memory.buffer, STACK_BYTES, length);
    scanners.set(view.buffer, this);
    return view;
  }

  grow(length: number): Buffer {
    const pages = Math.ceil((STACK_BYTES + length) / PAGE_BYTES) - this.memory.buffer.byteLength / PAGE_BYTES;
    if (pages > 0) this.memory.grow(pages);
    return this.view(length);
  }
}

/** The scanner whose memory each buffer from scanBuffer() lies in. */
const scanners = new WeakMap<ArrayBufferLike, WasmScanner>();

/** A buffer of `length` bytes that lines are checked in place in: the memory of a new scanner. */
export function scanBuffer(length: number): Buffer {
  return new WasmScanner(length).view(length);
}

/** `buffer`, from scanBuffer(), grown to `length` bytes with its bytes kept; `buffer` itself is
 * left empty. */
export function growScanBuffer(buffer: Buffer, length: number): Buffer {
  const scanner = scanners.get(buffer.buffer);
  if (scanner === undefined) throw new Error('growScanBuffer: not a buffer from scanBuffer()');
  return scanner.grow(length);
}

/** JSON's four whitespace bytes. Also here in JavaScript, because the row scanner passes whitespace
 * between the few members it builds, where a call into WebAssembly would cost more than the bytes. */
const WHITESPACE = new Uint8Array(256);
for (const c of ' \t\n\r') WHITESPACE[c.charCodeAt(0)] = 1;

export function skipWhitespace(bytes: Uint8Array, at: number, end: number): number {
  while (at < end && WHITESPACE[bytes[at] as number] === 1) at++;
  return at;
}

/** The line being checked, `bytes[0, end)` of a buffer that one object serves line after line
 * (only `end` changes). `bytes` is the buffer itself when it came from scanBuffer(), else a copy
 * made in a scanner's memory (for a line checked once, as in tests). */
export class StrictJsonLine {
  readonly bytes: Buffer;
  end: number;
  /** Where bytes[0] lies in the scanner's memory. */
  private readonly base: number;
  private readonly scanner: ScannerExports;

  constructor(bytes: Buffer) {
    let scanner = scanners.get(bytes.buffer);
    if (scanner === undefined) {
      const copy = scanBuffer(bytes.length);
      bytes.copy(copy);
      bytes = copy;
      scanner = scanners.get(copy.buffer) as WasmScanner;
    }
    this.bytes = bytes;
    this.end = bytes.length;
    this.base = bytes.byteOffset;
    this.scanner = scanner.exports;
  }

  /** Where the plain string content from `at` stops: at a quote, a backslash, a control character
   * or the line's end. */
  plainRun(at: number): number {
    return this.scanner.plain_run(this.base + at, this.base + this.end) - this.base;
  }

  /** `at` is just past the opening quote, or anywhere in the string before its closing quote;
   * returns just past the closing quote. */
  skipString(at: number): number {
    const end = this.scanner.skip_string(this.base + at, this.base + this.end);
    return end === -1 ? FAILED : end - this.base;
  }

  /** Checks the one value starting at `at` (no whitespace before it) and returns where it ends.
   * `depth` is how many containers are already open around it; opening one past
   * MAX_NESTING_DEPTH fails, as CPython's decoder does. */
  skipValue(at: number, depth: number): number {
    const end = this.scanner.skip_value(this.base + at, this.base + this.end, Math.max(0, MAX_NESTING_DEPTH - depth));
    return end === -1 ? FAILED : end - this.base;
  }
}
