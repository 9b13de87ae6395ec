import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { renderConfigurationDoc, renderPipelineConfigSchema } from '../../scripts/pipelineConfigDocs';

const root = path.resolve(__dirname, '../..');

/** The first line where the two texts differ, as a message a person can act on. */
function firstDifference(file: string, committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `${file}:${at + 1} is stale; run npm run schemas\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`;
}

for (const [file, render] of [
  ['schemas/pipeline_config.schema.json', renderPipelineConfigSchema],
  ['docs/configuration.md', renderConfigurationDoc],
] as const) {
  test(`committed ${file} matches contracts/config.ts`, () => {
    const committed = readFileSync(path.join(root, file), 'utf8');
    const generated = render();
    if (committed !== generated) assert.fail(firstDifference(file, committed, generated));
  });
}
