// The bad-input corpus (test/badInput/corpus, plus one 20 MB line made at test time): each case,
// the entry point it goes through and the outcome it must have. Messages are matched loosely on
// what a user needs: the file, the line and the reason. The cases are in collectInputCases.ts,
// configCases.ts, workflowInputCases.ts and cliCases.ts.

import { collectInputCases } from './collectInputCases';
import { configCases } from './configCases';
import { workflowInputCases } from './workflowInputCases';

export type Outcome = 'error' | 'success' | 'skip-audit';

/** A pipeline run on a real Temporal server; `config` is relative to the worker base dir. */
export interface PipelineCase {
  name: string;
  /** A workflow input; a collect input file becomes a generated config pointing at it. */
  input:
    | { config_path: string; run_id?: unknown; seed?: unknown; runid?: unknown; initial_pool?: unknown }
    | { collect_input: string };
  /** The workflow the input goes to; default pivotMiningWorkflow. */
  workflow?: 'nightlyMiningWorkflow' | 'pivotCurriculumWorkflow';
  expect: Outcome;
  message: RegExp;
}

/** Every pipeline case, in the order the test runs them. */
export const pipelineCases: PipelineCase[] = [...collectInputCases, ...configCases, ...workflowInputCases];
