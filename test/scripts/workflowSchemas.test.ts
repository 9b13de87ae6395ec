import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { pivotMiningInputSchema } from '../../contracts/workflowInputs';
import { renderWorkflowSchema, WORKFLOW_INPUT_SCHEMAS } from '../../scripts/workflowSchemas';

for (const name of Object.keys(WORKFLOW_INPUT_SCHEMAS) as Array<keyof typeof WORKFLOW_INPUT_SCHEMAS>) {
  test(`committed schemas/${name} matches the zod schema (run npm run schemas after changing an input)`, () => {
    const committed = readFileSync(path.resolve(__dirname, '../../schemas', name), 'utf8');
    assert.equal(committed, renderWorkflowSchema(name));
  });
}

test('the README start command input is valid and unknown keys are refused', () => {
  assert.ok(pivotMiningInputSchema.safeParse({ config_path: 'configs/demo.yaml' }).success);
  assert.ok(!pivotMiningInputSchema.safeParse({ config_path: 'configs/demo.yaml', api_key: 'x' }).success);
  assert.ok(!pivotMiningInputSchema.safeParse({ config_path: 'c.yaml', run_id: '../escape' }).success);
});
