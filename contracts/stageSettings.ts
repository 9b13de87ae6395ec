import { DEFAULT_ROUTE, type RoutingOptions } from '../gym/agentRouting';
import type { MaterializeOptions } from '../gym/materialize';
import type { RolloutStage, RunPlan } from './payloads';

// Collect and local-profile are the same chunked sub-pipeline with different knobs; this is the one
// place that maps the config onto those knobs, shared by the workflow (windowing) and activities.

export interface StageSettings {
  /** Which agent each row runs on and how many times (gym/agentRouting.ts). */
  routing: RoutingOptions;
  /**
   * NeMo Gym 0.7.0's `environment_server_name` under `environment_routing_mode: legacy`; its agent is
   * read from the head's config where the stage materializes (activities/run/legacyRouting.ts).
   */
  legacyEnvironmentServer?: string;
  seedPerRepeat: boolean;
  overrides: Record<string, unknown>;
  limit?: number;
  /** Materialized rows round by round (abcabc), NeMo Gym 0.7.0's `interleave_repeats`. */
  interleaveRepeats: boolean;
  /** A failed request's sidecar row as NeMo Gym 0.7.0's `route_failures_to_sidecar` writes it. */
  routeFailuresToSidecar: boolean;
  /** Which terminal failures are retried, NeMo Gym 0.7.0's `retry_terminal_timeouts`. */
  retryTerminalTimeouts: boolean;
  /** An invalid judge response is a failed attempt, NeMo Gym 0.7.0's `retry_invalid_judge_responses`. */
  retryInvalidJudgeResponses: boolean;
  /** A resumed chunk starts the rows whose failed attempts ran longest first, NeMo Gym 0.7.0's `dispatch_longest_first`. */
  dispatchLongestFirst: boolean;
  /** NeMo Gym 0.7.0's `dispatch_budget_s` and `drain_margin_s`: when rollouts stop being started. */
  dispatchBudgetS?: number;
  drainMarginS?: number;
  chunkSize: number;
  maxChunksInFlight: number;
  maxConcurrency: number;
  maxAttempts: number;
  requestTimeoutMs: number;
  allowPartialRollouts: boolean;
}

/**
 * The `stage` label of a chunk's worker metrics. Early local profiling's chunks are counted apart,
 * so `local_profile` adds up to the run's own stage, as run_summary.json counts it.
 */
export function metricsStage(input: { stage: string; plan?: { early?: boolean } }): string {
  return input.plan?.early ? `${input.stage}_early` : input.stage;
}

export function pivotAgentName(plan: RunPlan): string {
  return plan.config.publish.agent_name ?? `${plan.config.publish.dataset_name ?? plan.config.name}_pivot_agent`;
}

type CollectConfig = RunPlan['config']['collect'];

/** The agent rows without a mapping of their own run on, if the config names one: 0.7.0's agent_name, folded into agent_map._default. */
export function collectDefaultAgent(collect: CollectConfig): string | undefined {
  return collect.agent_name ?? collect.agent_map?.[DEFAULT_ROUTE];
}

/**
 * Collect routes rows as ng_collect_rollouts 0.7.0 does: agent_name re-routes every row (it is
 * agent_map._default), where 0.4.0 only filled rows without an agent_ref.
 */
function collectRouting(collect: CollectConfig): RoutingOptions {
  const defaultAgent = collectDefaultAgent(collect);
  const agentMap =
    defaultAgent === undefined ? collect.agent_map : { ...collect.agent_map, [DEFAULT_ROUTE]: defaultAgent };
  return {
    ...(agentMap === undefined ? {} : { agent_map: agentMap }),
    ...(collect.fan_out === undefined ? {} : { fan_out: collect.fan_out }),
    num_repeats: collect.num_repeats,
  };
}

export function stageSettings(plan: RunPlan, stage: RolloutStage): StageSettings {
  const { collect, local_profile: lp, profile } = plan.config;
  if (stage === 'collect') {
    return {
      routing: collectRouting(collect),
      ...(collect.environment_routing_mode === 'legacy'
        ? { legacyEnvironmentServer: collect.environment_server_name }
        : {}),
      seedPerRepeat: collect.seed_per_repeat,
      overrides: collect.responses_create_params,
      limit: collect.limit,
      interleaveRepeats: collect.interleave_repeats ?? false,
      routeFailuresToSidecar: collect.route_failures_to_sidecar ?? false,
      retryTerminalTimeouts: collect.retry_terminal_timeouts ?? false,
      retryInvalidJudgeResponses: collect.retry_invalid_judge_responses ?? false,
      dispatchLongestFirst: collect.dispatch_longest_first ?? false,
      dispatchBudgetS: collect.dispatch_budget_s,
      drainMarginS: collect.drain_margin_s,
      chunkSize: collect.chunk_size,
      maxChunksInFlight: collect.max_chunks_in_flight,
      maxConcurrency: collect.max_concurrency,
      maxAttempts: collect.max_attempts,
      requestTimeoutMs: collect.request_timeout_ms,
      allowPartialRollouts: profile.allow_partial_rollouts,
    };
  }
  return {
    // pivot-miner's own stage, whose bytes are fixed by the seed: rows without agent_ref get the
    // pivot agent, as NeMo Gym 0.4.0 filled them, and no row is re-routed.
    routing: { agent_name: pivotAgentName(plan), num_repeats: lp.num_samples },
    // Local profiling needs K different samples of the same prefix, so per-repeat seeds are always on.
    seedPerRepeat: true,
    overrides: lp.responses_create_params,
    // Local profiling is pivot-miner's own stage, not an ng_collect_rollouts run: its rows stay aabbcc.
    interleaveRepeats: false,
    routeFailuresToSidecar: false,
    retryTerminalTimeouts: false,
    retryInvalidJudgeResponses: false,
    dispatchLongestFirst: false,
    chunkSize: lp.chunk_size,
    maxChunksInFlight: lp.max_chunks_in_flight,
    maxConcurrency: lp.max_concurrency,
    maxAttempts: lp.max_attempts,
    requestTimeoutMs: lp.request_timeout_ms,
    // Always profiled in partial mode, so a pivot missing samples is reported with its missing
    // count and selection holds it back (or, with filter.allow_partial, publishes it marked
    // partial), instead of one failed sample failing the whole run.
    allowPartialRollouts: true,
  };
}

/** How a stage materializes its task rows (the prefetch alignment materializes candidates the same way). */
export function stageMaterializeOptions(settings: StageSettings): MaterializeOptions {
  return {
    ...settings.routing,
    responses_create_params: settings.overrides,
    seed_per_repeat: settings.seedPerRepeat,
    limit: settings.limit,
  };
}
