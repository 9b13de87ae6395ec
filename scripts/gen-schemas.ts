import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderWorkflowSchema, WORKFLOW_INPUT_SCHEMAS } from './workflowSchemas';

// `npm run schemas`: rewrites schemas/*.schema.json; test/scripts/workflowSchemas.test.ts fails on drift.
for (const name of Object.keys(WORKFLOW_INPUT_SCHEMAS) as Array<keyof typeof WORKFLOW_INPUT_SCHEMAS>) {
  const file = path.resolve(__dirname, '../schemas', name);
  writeFileSync(file, renderWorkflowSchema(name));
  console.log(`wrote ${file}`);
}
