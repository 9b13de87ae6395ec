import { ConfigError } from '../../contracts/errors';
import type { RunPlan } from '../../contracts/payloads';
import { pivotAgentName } from '../../contracts/stageSettings';
import { EMBEDDED_AGENT_NAME } from '../../servers/embeddedStack';
import { configKeyLocation } from './configFile';
import { getText, postJson, RequestFailure } from '../http/client';
import type { RunContext } from './runContext';
import { agentDirectory, resolveEndpoints, unknownAgentReason } from './servers';

// The servers half of the pre-flight check (activities/run/preflight.ts): do the agents the rows name
// resolve, and does the model answer? Embedded servers are never started for it (they belong to
// the worker) and spawned ones cannot be asked before their command runs; both are said as notes.

export interface Findings {
  /** What a run would refuse, each naming the file and line (or key) to fix. */
  problems: string[];
  /** What could not be checked here, and why. */
  notes: string[];
}

/** One model request, the smallest each API accepts; a real engine answers it in well under a second. */
const TINY_REQUEST = {
  responses: { path: '/v1/responses', body: { input: 'Say OK.', max_output_tokens: 16 } },
  chat_completions: {
    path: '/v1/chat/completions',
    body: { messages: [{ role: 'user', content: 'Say OK.' }], max_tokens: 16 },
  },
} as const;
const TINY_REQUEST_TIMEOUT_MS = 60_000;

export async function endpointProblems(
  ctx: RunContext<unknown>,
  plan: RunPlan,
  agentLines: ReadonlyMap<string, number>,
  inputPath: string,
  env: NodeJS.ProcessEnv,
): Promise<Findings> {
  const findings: Findings = { problems: [], notes: [] };
  await checkAgents(ctx, plan, agentLines, inputPath, findings);
  await checkModel(ctx, plan, env, findings);
  return findings;
}

/** Every agent the rows name, and the local-profiling agent of verifier nemo_gym_agent, must resolve. */
async function checkAgents(
  ctx: RunContext<unknown>,
  plan: RunPlan,
  agentLines: ReadonlyMap<string, number>,
  inputPath: string,
  findings: Findings,
): Promise<void> {
  const { servers, local_profile: lp } = plan.config;
  if (servers.mode === 'spawn') {
    findings.notes.push('servers.mode spawn: agent names cannot be checked without starting ng_run (servers.command)');
    return;
  }
  let agents: Map<string, string>;
  try {
    // The embedded stack is the worker's; its one agent is known without starting it.
    agents = servers.mode === 'embedded' ? new Map([[EMBEDDED_AGENT_NAME, '']]) : await agentDirectory(plan);
  } catch (err) {
    if (!(err instanceof RequestFailure)) throw err;
    findings.problems.push(`${await location(ctx, ['servers', 'head_url'])}: head server: ${err.message}`);
    return;
  }
  for (const [name, line] of agentLines) {
    if (!agents.has(name)) findings.problems.push(`${inputPath}:${line}: ${unknownAgentReason(plan, name, agents)}`);
  }
  if (lp.verifier === 'nemo_gym_agent') {
    const name = lp.agent_name ?? pivotAgentName(plan);
    if (!agents.has(name))
      findings.problems.push(
        `${await location(ctx, ['local_profile', 'agent_name'])}: local_profile.agent_name: ${unknownAgentReason(plan, name, agents)}`,
      );
  }
  if (servers.mode === 'attach' && servers.agent_url) await checkAnswers(ctx, servers.agent_url, findings);
}

/** Any HTTP answer proves a server is up (an agent answers 404 on its root); only failing to connect counts. */
async function checkAnswers(ctx: RunContext<unknown>, url: string, findings: Findings): Promise<void> {
  try {
    await getText(url, 10_000);
  } catch (err) {
    if (!(err instanceof RequestFailure)) throw err;
    if (err.failureClass !== 'http_4xx')
      findings.problems.push(`${await location(ctx, ['servers', 'agent_url'])}: agent: ${err.message}`);
  }
}

/** The model local profiling calls (verifier builtin) answers a tiny request with the configured key. */
async function checkModel(ctx: RunContext<unknown>, plan: RunPlan, env: NodeJS.ProcessEnv, findings: Findings) {
  const { servers, local_profile: lp } = plan.config;
  if (lp.verifier === 'nemo_gym_agent') {
    findings.notes.push('local_profile.model is not called: verifier nemo_gym_agent samples through the agent');
    return;
  }
  if (lp.model.url === undefined && servers.mode !== 'attach') {
    findings.notes.push(
      servers.mode === 'embedded'
        ? 'local_profile.model: the embedded policy simulator, started by the worker'
        : "local_profile.model: the spawned servers' model, which cannot be asked before ng_run starts",
    );
    return;
  }
  const key = lp.model.url === undefined ? ['servers', 'head_url'] : ['local_profile', 'model', 'url'];
  let urls: string[];
  try {
    const url = lp.model.url ?? (await resolveEndpoints(plan)).modelUrl;
    urls = typeof url === 'string' ? [url] : url;
  } catch (err) {
    if (!(err instanceof ConfigError || err instanceof RequestFailure)) throw err;
    findings.problems.push(`${await location(ctx, key)}: ${err.message}`);
    return;
  }
  const apiKeyEnv = lp.model.api_key_env;
  const apiKey = apiKeyEnv === undefined ? undefined : env[apiKeyEnv];
  if (apiKeyEnv !== undefined && !apiKey) {
    findings.problems.push(
      `${await location(ctx, ['local_profile', 'model', 'api_key_env'])}: local_profile.model.api_key_env: ${apiKeyEnv} is not set in this environment`,
    );
    return;
  }
  const failures = await Promise.all(urls.map((url) => askModel(url, plan, apiKey)));
  const down = failures.filter((failure): failure is string => failure !== undefined);
  // One replica answering is enough to start: a run benches the others until they answer.
  const where = await location(ctx, key);
  if (down.length === urls.length) findings.problems.push(...down.map((reason) => `${where}: ${reason}`));
  else
    findings.notes.push(...down.map((reason) => `${where}: a replica is down (the others take its share): ${reason}`));
}

/** Why the model at `url` did not answer a tiny request, or undefined when it did. The key never appears in it. */
async function askModel(url: string, plan: RunPlan, apiKey: string | undefined): Promise<string | undefined> {
  const { api, model, timeout_ms: timeoutMs } = plan.config.local_profile.model;
  const request = TINY_REQUEST[api];
  try {
    await postJson(
      new URL(request.path, url).toString(),
      { ...(model === undefined ? {} : { model }), ...request.body },
      {
        timeoutMs: Math.min(timeoutMs, TINY_REQUEST_TIMEOUT_MS),
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      },
    );
    return undefined;
  } catch (err) {
    if (!(err instanceof RequestFailure)) throw err;
    const reason = `model endpoint did not answer a ${api} request: ${err.message}`;
    return apiKey ? reason.replaceAll(apiKey, '***') : reason;
  }
}

function location(ctx: RunContext<unknown>, key: string[]): Promise<string> {
  return configKeyLocation(ctx.configPath, key);
}
