import { z } from 'zod';
import { pivotMiningInputSchema } from '../workflows/input';

// Workflow inputs as JSON Schema, generated from the zod schemas the worker validates with, so a
// Python training platform can build and check a start request without reading our TypeScript.

export const WORKFLOW_INPUT_SCHEMAS = {
  'pivot_mining_input.schema.json': { workflowType: 'pivotMiningWorkflow', schema: pivotMiningInputSchema },
};

export function renderWorkflowSchema(name: keyof typeof WORKFLOW_INPUT_SCHEMAS): string {
  const { workflowType, schema } = WORKFLOW_INPUT_SCHEMAS[name];
  const json = { $id: `pivot-miner/${name}`, title: `${workflowType} input`, ...z.toJSONSchema(schema, { io: 'input' }) };
  return `${JSON.stringify(json, null, 2)}\n`;
}
