import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARS } from './envVars';

// Which environment variables the sources read, found by reading them: `process.env.<name>`,
// `env.<name>`, `env[<constant>]` (a constant of the same file holding the name) in TypeScript and
// JavaScript, and `${<name>:-…}` in shell. test/scripts/cliReference/envScan.test.ts compares the
// result with envVars.ts both ways, so a variable the code starts reading cannot stay undocumented.

/** Folders of the product and its scripts; tests set variables, they do not define any. */
const SOURCE_DIRS = ['activities', 'bin', 'client', 'contracts', 'gym', 'servers', 'workers', 'workflows', 'scripts'];
const SOURCE_FILE = /\.(ts|js|cjs|mjs|sh)$|^bin\/pivot-miner$/;
/** Read for the system's own sake (a child's search path), not a setting of ours. */
const SYSTEM = new Set(['PATH', 'HOME']);

export interface SourceText {
  file: string;
  text: string;
}

function filesUnder(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(root, relative);
    return SOURCE_FILE.test(relative) ? [relative] : [];
  });
}

export function sourceTexts(root: string): SourceText[] {
  return SOURCE_DIRS.flatMap((dir) => filesUnder(root, dir)).map((file) => ({
    file,
    text: readFileSync(path.join(root, file), 'utf8'),
  }));
}

function namesIn({ file, text }: SourceText): string[] {
  if (file.endsWith('.sh') || !/\.\w+$/.test(file)) {
    return [...text.matchAll(/\$\{([A-Z_][A-Z0-9_]*):?-/g)].map((m) => m[1]!);
  }
  const constants = new Map(
    [...text.matchAll(/\bconst ([A-Z_][A-Z0-9_]*) = '([A-Z_][A-Z0-9_]*)'/g)].map((m) => [m[1]!, m[2]!]),
  );
  const direct = [...text.matchAll(/\benv\.([A-Z_][A-Z0-9_]*)\b/g)].map((m) => m[1]!);
  const quoted = [...text.matchAll(/\benv\[['"]([A-Z_][A-Z0-9_]*)['"]\]/g)].map((m) => m[1]!);
  const byConstant = [...text.matchAll(/\benv\[([A-Z_][A-Z0-9_]*)\]/g)].flatMap((m) => {
    const name = constants.get(m[1]!);
    return name === undefined ? [] : [name];
  });
  return [...direct, ...quoted, ...byConstant];
}

/** Each variable the sources read, with the files that read it. */
export function envVarsRead(sources: readonly SourceText[]): Map<string, string[]> {
  const read = new Map<string, string[]>();
  for (const source of sources) {
    for (const name of new Set(namesIn(source))) {
      if (!SYSTEM.has(name)) read.set(name, [...(read.get(name) ?? []), source.file]);
    }
  }
  return read;
}

/** Read by some source but not in envVars.ts: `NAME (file, …)` per variable. */
export function undocumentedEnvVars(read: ReadonlyMap<string, string[]>): string[] {
  const documented = new Set(ENV_VARS.map((v) => v.name));
  return [...read].filter(([name]) => !documented.has(name)).map(([name, files]) => `${name} (${files.join(', ')})`);
}

/** In envVars.ts but read by no source, nor by a library. */
export function unreadEnvVars(read: ReadonlyMap<string, string[]>): string[] {
  return ENV_VARS.filter((v) => v.readByLibrary === undefined && !read.has(v.name)).map((v) => v.name);
}
