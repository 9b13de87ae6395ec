import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Relative path → sha256 (and mtime, unless `withMtime` is false) of every file under `dir`, so
 * "unchanged" covers every byte, every name and every write, even one of the same bytes.
 */
export function checksums(dir: string, withMtime = true): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else
        out[path.relative(dir, p)] =
          `${createHash('sha256').update(readFileSync(p)).digest('hex')}${withMtime ? ` ${statSync(p).mtimeMs}` : ''}`;
    }
  };
  walk(dir);
  return out;
}

/** Every message down an error's cause chain, one a line (a workflow failure wraps the activity's). */
export function causeMessages(err: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = (e as Error & { cause?: unknown }).cause) messages.push(e.message);
  return messages.join('\n');
}
