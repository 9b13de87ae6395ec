import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildProgram } from './cliProgram';
import { renderCliReference } from './cliReference/render';
import { renderConfigurationDoc, renderPipelineConfigSchema } from './pipelineConfigDocs';
import { renderWorkflowSchema, WORKFLOW_INPUT_SCHEMAS } from './workflowSchemas';

// `npm run schemas`: rewrites schemas/*.schema.json and docs/configuration.md from the zod schemas,
// and docs/cli.md from the commands' definitions; test/scripts/workflowSchemas.test.ts,
// pipelineConfigDocs.test.ts and cliReference/render.test.ts fail on drift.
function write(relative: string, text: string): void {
  const file = path.resolve(__dirname, '..', relative);
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}

for (const name of Object.keys(WORKFLOW_INPUT_SCHEMAS) as Array<keyof typeof WORKFLOW_INPUT_SCHEMAS>) {
  write(path.join('schemas', name), renderWorkflowSchema(name));
}
write('schemas/pipeline_config.schema.json', renderPipelineConfigSchema());
write('docs/configuration.md', renderConfigurationDoc());
write('docs/cli.md', renderCliReference(buildProgram()));
