import { ConfigError } from '../../contracts/errors';
import { pivotAgentName, stageSettings } from '../../contracts/stageSettings';
import type { ChunkInput } from '../../contracts/payloads';
import { chunkDispatchGate } from './dispatchGates';
import { gymAgentExecutor } from './executors/gymAgent';
import { singleStepExecutor } from './executors/singleStep';
import type { RolloutExecutor } from './executors/types';
import { agentDirectory, resolveEndpoints, unknownAgentReason } from '../run/servers';

// What runs a chunk's rows: the stage's NeMo Gym agent (collect, and local profiling through an
// agent), or the in-process single-step executor against the policy model.

/** `secrets` is the worker's environment, where API keys named by `api_key_env` live (never in inputs). */
export async function buildExecutor(
  secrets: NodeJS.ProcessEnv,
  input: ChunkInput,
  rank: number,
  onRequest?: (startMs: number, endMs: number) => void,
): Promise<RolloutExecutor> {
  const { plan, stage } = input;
  const settings = stageSettings(plan, stage);
  if (stage === 'collect') {
    return gymAgentExecutor({
      agentUrls: await agentDirectory(plan),
      timeoutMs: settings.requestTimeoutMs,
      maxConcurrency: settings.maxConcurrency,
      rank,
      onRequest,
      retryTerminalTimeouts: settings.retryTerminalTimeouts,
      retryInvalidJudgeResponses: settings.retryInvalidJudgeResponses,
      gate: chunkDispatchGate(input),
    });
  }
  const lp = plan.config.local_profile;
  if (lp.verifier === 'nemo_gym_agent') {
    const agentName = lp.agent_name ?? pivotAgentName(plan);
    const agentUrls = await agentDirectory(plan);
    if (!agentUrls.has(agentName))
      throw new ConfigError(`local_profile.agent_name: ${unknownAgentReason(plan, agentName, agentUrls)}`);
    return gymAgentExecutor({
      agentUrls,
      agentName,
      timeoutMs: settings.requestTimeoutMs,
      maxConcurrency: settings.maxConcurrency,
      rank,
      onRequest,
    });
  }
  const endpoints = await resolveEndpoints(plan);
  const model = lp.model;
  let apiKey: string | undefined;
  if (model.api_key_env) {
    apiKey = secrets[model.api_key_env];
    if (!apiKey)
      throw new ConfigError(
        `local_profile.model.api_key_env names ${model.api_key_env}, which is not set in this worker's environment`,
      );
  }
  return singleStepExecutor({
    modelUrl: endpoints.modelUrl,
    api: endpoints.modelApi,
    model: endpoints.modelName,
    apiKey,
    timeoutMs: Math.min(settings.requestTimeoutMs, model.timeout_ms),
    maxConcurrency: Math.min(settings.maxConcurrency, model.max_concurrency),
    comparatorConfig: lp.tool_call_comparator_config,
    unpackExtraBody: model.unpack_extra_body,
    rank,
    onRequest,
  });
}
