// What CPython's json decoder produces and how it fails, apart from the scanner that does it
// (gym/pythonJsonScanner.ts); gym/pythonJson.ts is the entry point that re-exports all of it.
import { pythonJsonDecodeError, type PythonJsonDecodeError } from './pythonJsonError';

/**
 * A decoded value as Python sees it: `bigint` is a Python int (arbitrary precision), `number` a
 * Python float, `boolean` a bool, `Map` a dict. A Map keeps text order, keeps a re-assigned key in
 * its first place, and has no inherited keys (`__proto__`, `toString` are ordinary strings).
 */
export type PyValue = null | boolean | bigint | number | string | PyValue[] | PyDict;
export type PyDict = Map<string, PyValue>;

export function isPyDict(value: PyValue | undefined): value is PyDict {
  return value instanceof Map;
}

/**
 * CPython raises RecursionError (not a decode error, so NeMo Gym has no verdict) around 1000 levels;
 * beyond this depth we report a decode error rather than overflow our stack. A text needs at least
 * 2 × (this + 1) characters to exceed it, which lets callers skip the check for shorter texts.
 */
export const MAX_NESTING_DEPTH = 2000;

/** A parse failure inside the scanner: a plain object, because an Error captures a stack trace,
 * which would cost more than the scan itself on the many undecodable `arguments` a policy emits. */
export class PythonJsonFailure {
  constructor(
    private readonly text: string,
    readonly reason: string,
    /** UTF-16 index into the text. */
    readonly index: number,
  ) {}

  toError(): PythonJsonDecodeError {
    return pythonJsonDecodeError(this.text, this.reason, this.index);
  }
}
