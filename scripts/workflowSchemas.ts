import { z } from 'zod';
import {
  nightlyMiningInputSchema,
  pivotCurriculumInputSchema,
  pivotMiningInputSchema,
  policyCheckpointSchema,
} from '../contracts/workflowInputs';

// Workflow inputs as JSON Schema, generated from the zod schemas the worker validates with, so a
// Python training platform can build and check a start request without reading our TypeScript.

export const WORKFLOW_INPUT_SCHEMAS = {
  'pivot_mining_input.schema.json': { workflowType: 'pivotMiningWorkflow', schema: pivotMiningInputSchema },
  'nightly_mining_input.schema.json': { workflowType: 'nightlyMiningWorkflow', schema: nightlyMiningInputSchema },
  'pivot_curriculum_input.schema.json': { workflowType: 'pivotCurriculumWorkflow', schema: pivotCurriculumInputSchema },
  'policy_checkpoint_update.schema.json': {
    workflowType: 'pivotCurriculumWorkflow policyCheckpoint update',
    schema: policyCheckpointSchema,
  },
};

export function renderWorkflowSchema(name: keyof typeof WORKFLOW_INPUT_SCHEMAS): string {
  const { workflowType, schema } = WORKFLOW_INPUT_SCHEMAS[name];
  const json = {
    $id: `pivot-miner/${name}`,
    title: `${workflowType} input`,
    ...z.toJSONSchema(schema, { io: 'input' }),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}
