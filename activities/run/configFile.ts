import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { pipelineConfigSchema, type PipelineConfig } from '../../contracts/config';
import { ConfigError } from '../../contracts/errors';

// Reads the pipeline config YAML, reporting every problem as `file:line: key: reason`.

export async function loadPipelineConfig(file: string): Promise<PipelineConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot read config: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { prettyErrors: true, lineCounter });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const line = first.linePos?.[0]?.line;
    throw new ConfigError(`${file}:${line ?? '?'}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  const parsed = pipelineConfigSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues
        .map((issue) => {
          const key = issue.path.length ? issue.path.join('.') : '(top level)';
          return `${file}:${configLine(doc, lineCounter, issue)}: ${key}: ${issue.message}`;
        })
        .join('\n'),
    );
  }
  return parsed.data;
}

/**
 * The line a config issue is about: the offending key itself for an unknown key, else the value at
 * the issue's path, else its nearest parent that exists (a missing key is reported at its parent).
 */
function configLine(
  doc: YAML.Document,
  lineCounter: YAML.LineCounter,
  issue: { path: PropertyKey[]; code?: string; keys?: string[] },
): number {
  const path = issue.path.filter((k): k is string | number => typeof k !== 'symbol');
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const parent = path.length ? doc.getIn(path, true) : doc.contents;
    if (YAML.isMap(parent)) {
      const pair = parent.items.find((item) => YAML.isScalar(item.key) && item.key.value === issue.keys![0]);
      const range = YAML.isScalar(pair?.key) ? pair.key.range : undefined;
      if (range) return lineCounter.linePos(range[0]).line;
    }
  }
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    const range = YAML.isNode(node) ? node.range : undefined;
    if (range) return lineCounter.linePos(range[0]).line;
  }
  return 1;
}

/**
 * Resolves a path from a config or input against a base directory, refusing anything outside `root`:
 * `..` and absolute paths lexically, and symlinks by resolving the deepest part that exists, so a link
 * inside the root that points elsewhere cannot carry writes out of it.
 */
export function resolveInside(root: string, base: string, p: string): string {
  const resolved = path.resolve(base, p);
  const outside = (rel: string) => rel.startsWith('..') || path.isAbsolute(rel);
  if (outside(path.relative(root, resolved)) || outside(path.relative(realExisting(root), realExisting(resolved)))) {
    throw new ConfigError(`path ${JSON.stringify(p)} resolves to ${resolved}, outside the allowed root ${root}`);
  }
  return resolved;
}

/** realpath of the longest existing prefix of `p`, with the rest appended (a path to be created may not exist yet). */
function realExisting(p: string): string {
  for (let existing = p, rest = ''; ;) {
    try {
      return path.join(realpathSync(existing), rest);
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return p;
      rest = path.join(path.basename(existing), rest);
      existing = parent;
    }
  }
}

/** `file:line` of a key in a config that already loaded, for errors about a value that parsed but is unusable. */
export async function configKeyLocation(file: string, keyPath: string[]): Promise<string> {
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(await readFile(file, 'utf8'), { lineCounter });
  return `${file}:${configLine(doc, lineCounter, { path: keyPath })}`;
}
