import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';

const bundles = createRequire(__filename)('../../bin/cachedBundle.js') as { loadableFile(entry: string): string };

// `validate` starts a worker thread per extra core, each loading what loadableFile gives for the
// worker module: it must be a plain bundle of the row checks alone, not the CLI with zod and the rest.
test('the validator workers load a bundle of the row-checking modules alone', () => {
  const file = bundles.loadableFile('gym/validator/parallel.ts');
  assert.ok(file.endsWith('.js'), file);
  const inputs = Object.keys(JSON.parse(readFileSync(file.replace(/\.js$/, '.inputs.json'), 'utf8')) as Record<string, string>);
  assert.ok(inputs.includes('gym/validator/fastRows.ts'), inputs.join(', '));
  assert.deepEqual(inputs.filter((input) => input.includes('node_modules') || !input.startsWith('gym/')), []);
  assert.equal(path.dirname(file), path.dirname(bundles.loadableFile('scripts/commands/validateMain.ts')));
});
