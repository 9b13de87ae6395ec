// CPython's `JSONDecodeError` text: `<reason>: line L column C (char P)`, positions in code points.

export class PythonJsonDecodeError extends Error {
  constructor(
    readonly reason: string,
    /** 0-based offset in code points, as Python counts. */
    readonly position: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason}: line ${line} column ${column} (char ${position})`);
    this.name = 'PythonJsonDecodeError';
  }
}

/** Code points in `text` before UTF-16 index `index16`: a surrogate pair is one, and so is a lone
 * surrogate (possible in decoded `arguments` strings). */
function codePointIndex(text: string, index16: number): number {
  let pairs = 0;
  for (let i = 0; i < index16 - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return index16 - pairs;
}

/** The error CPython raises for `reason` at UTF-16 index `index16` of `text`. */
export function pythonJsonDecodeError(text: string, reason: string, index16: number): PythonJsonDecodeError {
  const position = codePointIndex(text, index16);
  const lastNewline = index16 === 0 ? -1 : text.lastIndexOf('\n', index16 - 1);
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index16; i = text.indexOf('\n', i + 1)) line++;
  const column = lastNewline === -1 ? position + 1 : position - codePointIndex(text, lastNewline);
  return new PythonJsonDecodeError(reason, position, line, column);
}
