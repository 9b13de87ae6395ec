import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ensureNemoGym, runNemoGymCommand, stopProcessGroup } from '../../scripts/lib/nemoGym';

// NeMo Gym 0.7.0's own `gym eval aggregate` on shards, with what it asks for served by 0.7.0's code:
// one loopback server in the 0.7.0 venv answers the head server's `/global_config_dict_yaml` with a
// config where each agent is fronted by a `legacy_agent` environment server named as 0.7.0 names the
// relay it generates, and answers `/aggregate_metrics` as 0.7.0's agents do by default
// (base_responses_api_agent.py: compute_aggregate_metrics with AggregateMetricsMixin's hooks). The
// relay forwards the request and validates the answer into the same model, so it is left out: the
// environment server's address is the agent's own.

const SERVER = `
import json, socket, sys
import uvicorn
from fastapi import Body, FastAPI
from nemo_gym.config_types import AggregateMetrics, AggregateMetricsRequest
from nemo_gym.global_config import legacy_environment_server_name
from nemo_gym.reward_profile import AggregateMetricsMixin, compute_aggregate_metrics

agents = sys.argv[1:]
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
where = {"host": "127.0.0.1", "port": port}
config = {"head_server": where}
for agent in agents:
    config[agent] = {"responses_api_agents": {"simple_agent": {"entrypoint": "app.py", **where}}}
    relay = {"entrypoint": "app.py", "agent_server": {"type": "responses_api_agents", "name": agent}, **where}
    config[legacy_environment_server_name(agent, "simple_agent")] = {"environment_servers": {"legacy_agent": relay}}
app = FastAPI()
hooks = AggregateMetricsMixin()

@app.get("/global_config_dict_yaml")
async def global_config_dict_yaml() -> str:
    return json.dumps(config)

@app.post("/aggregate_metrics")
async def aggregate_metrics(body: AggregateMetricsRequest = Body()) -> AggregateMetrics:
    return compute_aggregate_metrics(
        body.verify_responses,
        compute_metrics_fn=hooks.compute_metrics,
        get_key_metrics_fn=hooks.get_key_metrics,
        compute_repeat_metrics_fn=hooks.compute_repeat_metrics,
    )

print(port, flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
`;

/** Runs `gym eval aggregate -i <inputGlob> -o <output> ...extra`, agents named `agents` answering; resolves to its output. */
export async function gymEvalAggregate070(
  inputGlob: string,
  output: string,
  agents: string[],
  extra: string[] = [],
): Promise<string> {
  const install = ensureNemoGym('0.7.0');
  const server = spawn(path.join(install.binDir, 'python'), ['-c', SERVER, ...agents], {
    env: install.env,
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  try {
    const port = await new Promise<string>((resolve, reject) => {
      createInterface({ input: server.stdout! }).once('line', resolve);
      server.once('exit', (code) => reject(new Error(`the 0.7.0 agent stand-in exited (${code})`)));
    });
    const args = ['eval', 'aggregate', '-i', inputGlob, '-o', output, '+head_server.host=127.0.0.1'];
    const run = await runNemoGymCommand(
      install,
      'gym',
      [...args, `+head_server.port=${port}`, ...extra],
      path.dirname(output),
    );
    if (run.code !== 0) throw new Error(`gym eval aggregate exited ${run.code}:\n${run.output.slice(-3000)}`);
    return run.output;
  } finally {
    await stopProcessGroup(server, exited);
  }
}
