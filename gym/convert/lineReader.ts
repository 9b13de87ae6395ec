import { readJsonl } from '../jsonl';
import { ConvertInputError, JsonlError } from '../errors';

export interface SourceRow {
  /** 1-based physical line number. */
  line: number;
  row: Record<string, unknown>;
}

/**
 * Streams the JSON object rows of a JSONL file through gym/jsonl (UTF-8 checked, BOM and CRLF
 * accepted, blank lines skipped). A line that is not a JSON object is bad input, not messy data,
 * so it stops the run.
 */
export async function* readJsonlRows(file: string): AsyncGenerator<SourceRow> {
  try {
    for await (const { value, line } of readJsonl(file)) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new ConvertInputError(file, line, `expected a JSON object, saw ${describeValue(value)}`);
      }
      yield { line, row: value as Record<string, unknown> };
    }
  } catch (err) {
    if (err instanceof JsonlError) throw new ConvertInputError(err.file, err.line, err.reason);
    throw err;
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
  if (typeof value === 'string')
    return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return `${typeof value} ${value.toString()}`;
  return typeof value;
}
