import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** Bad input that stops a conversion: the message names the file, the line and what was wrong. */
export class ConvertInputError extends Error {
  constructor(file: string, line: number | null, reason: string) {
    super(line === null ? `${file}: ${reason}` : `${file}:${line}: ${reason}`);
    this.name = 'ConvertInputError';
  }
}

export interface SourceRow {
  /** 1-based physical line number. */
  line: number;
  row: Record<string, unknown>;
}

/**
 * Streams the JSON object rows of a JSONL file. Blank lines are skipped (a missing final newline is
 * fine); a line that is not a JSON object is bad input, not messy data, so it stops the run.
 */
export async function* readJsonlRows(file: string): AsyncGenerator<SourceRow> {
  const stream = createReadStream(file, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line += 1;
      if (text.trim() === '') continue;
      let row: unknown;
      try {
        row = JSON.parse(text);
      } catch (err) {
        throw new ConvertInputError(file, line, `invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (typeof row !== 'object' || row === null || Array.isArray(row)) {
        throw new ConvertInputError(file, line, `expected a JSON object, saw ${describeValue(row)}`);
      }
      yield { line, row: row as Record<string, unknown> };
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

/** A short human description of a JSON value, for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    const shown = keys.slice(0, 12).join(', ');
    return keys.length === 0 ? 'an empty object' : `an object with keys [${shown}${keys.length > 12 ? ', …' : ''}]`;
  }
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  return `${typeof value} ${String(value)}`;
}
