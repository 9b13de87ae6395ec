import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The layering README.md describes, checked on every import, require() and import(): gym/ is the
// pure core, contracts/ sits on it, activities/ is the IO shell around both, workflows/ orchestrate
// activities; nothing reaches up into a higher layer, the launcher (bin/) or the tools (scripts/).

const root = path.resolve(__dirname, '../..');
const LAYERS: Record<string, string[]> = {
  gym: ['gym'],
  contracts: ['gym', 'contracts'],
  servers: ['gym', 'contracts', 'servers'],
  activities: ['gym', 'contracts', 'servers', 'activities'],
  workflows: ['gym', 'contracts', 'activities', 'workflows'],
};
/** Node modules the pure core must not reach: it spawns nothing and compiles nothing. */
const PURE_FORBIDDEN = ['node:child_process', 'child_process', 'node:vm', 'vm'];
const PURE_LAYERS = ['gym', 'contracts'];

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** Every module specifier in `text`: static imports and re-exports, require() and import(). */
export function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)(['"])([^'"]+)\1/g)].map((m) => m[2]!);
}

/** What `file` (relative to the root) imports against the layer rules: one line per violation. */
export function violations(file: string, text: string, allowed: string[]): string[] {
  const found: string[] = [];
  const pure = PURE_LAYERS.includes(file.split(path.sep)[0]!);
  for (const spec of specifiers(text)) {
    if (spec.startsWith('.')) {
      const target = path.relative(root, path.resolve(root, path.dirname(file), spec));
      if (!allowed.includes(target.split(path.sep)[0]!)) found.push(`${file} imports ${target}`);
    } else if (pure && PURE_FORBIDDEN.includes(spec)) {
      found.push(`${file} imports ${spec}`);
    }
  }
  // A path computed at run time hides where it leads (the validator once found the launcher that way).
  if (pure && /\brequire\(\s*[^'"\s)]/.test(text)) found.push(`${file} requires a computed path`);
  return found;
}

for (const [layer, allowed] of Object.entries(LAYERS)) {
  test(`${layer}/ imports only from ${allowed.join(', ')} (and packages)`, () => {
    const found = tsFiles(layer).flatMap((file) =>
      violations(file, readFileSync(path.join(root, file), 'utf8'), allowed),
    );
    assert.deepEqual(found, []);
  });
}

test('the check sees a gym/ module reaching the launcher through import, require() or import(), and a child process', () => {
  const file = path.join('gym', 'validator', 'probe.ts');
  assert.deepEqual(violations(file, "import { built } from '../../bin/built';", LAYERS.gym!), [
    `${file} imports bin/built`,
  ]);
  assert.deepEqual(violations(file, "const b = require('../../bin/built.js');", LAYERS.gym!), [
    `${file} imports bin/built.js`,
  ]);
  assert.deepEqual(violations(file, "await import('../../scripts/build');", LAYERS.gym!), [
    `${file} imports scripts/build`,
  ]);
  assert.deepEqual(violations(file, "import { spawn } from 'node:child_process';", LAYERS.gym!), [
    `${file} imports node:child_process`,
  ]);
  assert.deepEqual(violations(file, "const b = require(path.join(root, 'bin', 'built.js'));", LAYERS.gym!), [
    `${file} requires a computed path`,
  ]);
  assert.deepEqual(
    violations(file, "import { readFileSync } from 'node:fs';\nimport { x } from '../kindedJson';", LAYERS.gym!),
    [],
  );
});
