import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { renderConfigurationDoc, renderPipelineConfigSchema } from '../../scripts/pipelineConfigDocs';
import { staleDocMessage } from '../helpers/staleDoc';

const root = path.resolve(__dirname, '../..');

for (const [file, render] of [
  ['schemas/pipeline_config.schema.json', renderPipelineConfigSchema],
  ['docs/configuration.md', renderConfigurationDoc],
] as const) {
  test(`committed ${file} matches contracts/config.ts`, () => {
    const committed = readFileSync(path.join(root, file), 'utf8');
    const stale = staleDocMessage(file, committed, render());
    if (stale) assert.fail(stale);
  });
}
