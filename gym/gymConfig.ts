import { z } from 'zod';
import YAML from 'yaml';

// The NeMo Gym config that serves a published pivot dataset: one resources server
// (`single_step_tool_use_with_argument_comparison`) and one `tool_simulation_agent` pointing at it.
// Shaped like upstream's resources_servers/single_step_tool_use_with_argument_comparison/configs/*.yaml
// so `ng_run`/`ng_prepare_data` load it as-is, with the agent named exactly like every row's
// `agent_ref.name`.

export const PIVOT_RESOURCES_SERVER_TYPE = 'single_step_tool_use_with_argument_comparison';
export const PIVOT_AGENT_TYPE = 'tool_simulation_agent';
export const DEFAULT_MODEL_SERVER_NAME = 'policy_model';
/** NeMo Gym requires the threshold; 0.1 is what its conversational pivot config ships with. */
export const DEFAULT_TOOL_CALL_COMPARATOR_CONFIG = { word_count_similarity_threshold: 0.1 } as const;

const AGENT_SUFFIX = '_agent';
const RESOURCES_SERVER_SUFFIX = '_resources_server';

export const pivotGymConfigOptionsSchema = z.strictObject({
  agentName: z.string().regex(/^[A-Za-z0-9._-]+$/, 'must be a plain server name (letters, digits, . _ -)'),
  resourcesServerName: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/)
    .optional(),
  modelServerName: z.string().min(1).default(DEFAULT_MODEL_SERVER_NAME),
  comparatorConfig: z.record(z.string(), z.unknown()).default({}),
  datasetName: z.string().min(1),
  /** `train` by default: that is what `ng_prepare_data +mode=train_preparation` picks up. */
  datasetType: z.enum(['train', 'validation', 'example']).default('train'),
  jsonlFpath: z.string().min(1),
  /** Where the validation side of a split is: listed as a second dataset, `type: validation`. */
  validationJsonlFpath: z.string().min(1).optional(),
  numRepeats: z.number().int().positive().default(1),
  /** NeMo Gym requires a license on train/validation datasets; `TBD` is its own placeholder value. */
  license: z.string().min(1).default('TBD'),
  description: z.string().min(1).optional(),
});
export type PivotGymConfigOptions = z.input<typeof pivotGymConfigOptionsSchema>;

/** Block-name stem, following NeMo Gym's `<stem>_agent` / `<stem>_resources_server` pairs. */
export function gymConfigStem(agentName: string): string {
  return agentName.endsWith(AGENT_SUFFIX) && agentName.length > AGENT_SUFFIX.length
    ? agentName.slice(0, -AGENT_SUFFIX.length)
    : agentName;
}

/** Named like upstream's `<dataset>_single_step_tool_use_with_argument_comparison.yaml` configs. */
export function pivotGymConfigFileName(datasetName: string): string {
  return `${datasetName}_${PIVOT_RESOURCES_SERVER_TYPE}.yaml`;
}

export function validationDatasetName(datasetName: string): string {
  return `${datasetName}_validation`;
}

export function defaultResourcesServerName(agentName: string): string {
  return `${gymConfigStem(agentName)}${RESOURCES_SERVER_SUFFIX}`;
}

export interface PivotGymConfig {
  [serverName: string]: Record<string, Record<string, unknown>>;
}

export function buildPivotGymConfig(input: PivotGymConfigOptions): PivotGymConfig {
  const opts = pivotGymConfigOptionsSchema.parse(input);
  const resourcesServerName = opts.resourcesServerName ?? defaultResourcesServerName(opts.agentName);
  if (resourcesServerName === opts.agentName) {
    throw new Error(`resources server name must differ from the agent name (${opts.agentName})`);
  }
  return {
    [resourcesServerName]: {
      resources_servers: {
        [PIVOT_RESOURCES_SERVER_TYPE]: {
          entrypoint: 'app.py',
          domain: 'agent',
          tool_call_comparator_config: { ...DEFAULT_TOOL_CALL_COMPARATOR_CONFIG, ...opts.comparatorConfig },
          verified: false,
          description:
            opts.description ??
            `PivotRL pivots mined from successful agent trajectories (${opts.datasetName}); the model must produce the expert's next action.`,
        },
      },
    },
    [opts.agentName]: {
      responses_api_agents: {
        [PIVOT_AGENT_TYPE]: {
          entrypoint: 'app.py',
          resources_server: { type: 'resources_servers', name: resourcesServerName },
          model_server: { type: 'responses_api_models', name: opts.modelServerName },
          datasets: [
            {
              name: opts.datasetName,
              type: opts.datasetType,
              jsonl_fpath: opts.jsonlFpath,
              num_repeats: opts.numRepeats,
              license: opts.license,
            },
            ...(opts.validationJsonlFpath === undefined
              ? []
              : [
                  {
                    name: validationDatasetName(opts.datasetName),
                    type: 'validation',
                    jsonl_fpath: opts.validationJsonlFpath,
                    num_repeats: 1,
                    license: opts.license,
                  },
                ]),
          ],
        },
      },
    },
  };
}

/** YAML text in the layout of NeMo Gym's own configs (block style, lists flush with their key). */
export function renderPivotGymConfigYaml(config: PivotGymConfig): string {
  return YAML.stringify(config, { indent: 2, indentSeq: false, lineWidth: 0, sortMapEntries: false });
}
