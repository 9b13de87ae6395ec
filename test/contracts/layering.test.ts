import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// The layering README.md describes, checked on every import: gym/ is the pure core, contracts/ sits
// on it, and nothing in either reaches up into the IO shell, the orchestration or the tools.

const root = path.resolve(__dirname, '../..');
const LAYERS: Record<string, string[]> = {
  gym: ['gym'],
  contracts: ['gym', 'contracts'],
};

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

for (const [layer, allowed] of Object.entries(LAYERS)) {
  test(`${layer}/ imports only from ${allowed.join(', ')} (and packages)`, () => {
    const violations: string[] = [];
    for (const file of tsFiles(layer)) {
      for (const [, spec] of readFileSync(path.join(root, file), 'utf8').matchAll(/from '(\.[^']*)'/g)) {
        const target = path.relative(root, path.resolve(root, path.dirname(file), spec!));
        if (!allowed.includes(target.split(path.sep)[0]!)) violations.push(`${file} imports ${target}`);
      }
    }
    assert.deepEqual(violations, []);
  });
}
