import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// docs/python.md shows examples/python/start_pivot_mining.py, which test/examples/ runs against a
// real worker; the doc's copy must be that file byte for byte, so what a reader copies is what ran.

const repoRoot = path.resolve(__dirname, '../..');

test("docs/python.md's first python block is examples/python/start_pivot_mining.py", () => {
  const doc = readFileSync(path.join(repoRoot, 'docs/python.md'), 'utf8');
  const block = /```python\n([\s\S]*?)```\n/.exec(doc);
  assert.ok(block, 'docs/python.md has a python block');
  assert.equal(block[1], readFileSync(path.join(repoRoot, 'examples/python/start_pivot_mining.py'), 'utf8'));
});
