import { readFileSync } from 'node:fs';

/** Reads a small JSONL artifact whole; tests only. */
export function readJsonlSync<T = Record<string, unknown>>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}
