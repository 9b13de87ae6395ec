import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Command, InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { DEFAULT_TOOL_CALL_COMPARATOR_CONFIG } from '../../gym/gymConfig';
import { type ToolCallComparatorConfig, toolCallComparatorConfigSchema } from '../../gym/verifier';
import {
  VERIFIER_NEMO_GYM_COMMIT,
  VERIFIER_RESOURCES_SERVER_TYPE,
  createVerifierServer,
  loadVerifierConfigFromGymYaml,
} from '../../servers/verifierServer';

// `pivot-miner verify-server`: the built-in verifier as a standalone NeMo Gym resources server, so a
// NeMo Gym config (or any agent) can score pivot rows with it without the rest of the pipeline.

/** Clear of the servers it usually runs beside: vLLM (8000), llama-server (8080), Temporal (7233, 8233). */
export const DEFAULT_VERIFY_SERVER_PORT = 8090;

const verifyServerArgsSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  config: z.string().min(1).optional(),
  serverName: z.string().min(1).optional(),
});

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected an integer from 0 to 65535');
  return port;
}

const HELP = `
A NeMo Gym-compatible resources server of type ${VERIFIER_RESOURCES_SERVER_TYPE}.
POST /verify takes a pivot row (responses_create_params, expected_action) plus the model's
\`response\` and returns the row with \`reward\` and \`category\`, shaped as NeMo Gym's own server
returns them (FastAPI-style 422s for bad bodies). POST /seed_session is a no-op.

Scoring is pivot-miner's built-in TypeScript port of that server's verifier (the one the pipeline's
local profiling uses). It follows NeMo Gym at commit ${VERIFIER_NEMO_GYM_COMMIT.slice(0, 7)} (${VERIFIER_NEMO_GYM_COMMIT}),
checked against vectors produced by that code. NeMo Gym 0.4.0's copy of the server takes the
same request and returns the same fields, but has no function_call_batch rows or parallel
reward modes.

tool_call_comparator_config comes from --config (a NeMo Gym config YAML, e.g. the one publish
writes next to pivots.jsonl); without it: ${JSON.stringify(DEFAULT_TOOL_CALL_COMPARATOR_CONFIG)} and NeMo Gym's defaults.

Example:
  pivot-miner verify-server --config artifacts/runs/<run_id>/dataset/<dataset>_${VERIFIER_RESOURCES_SERVER_TYPE}.yaml
  curl -s http://127.0.0.1:${DEFAULT_VERIFY_SERVER_PORT}/verify -H 'content-type: application/json' -d @row_with_response.json
`;

async function comparatorConfig(args: z.infer<typeof verifyServerArgsSchema>): Promise<ToolCallComparatorConfig> {
  if (args.config === undefined) {
    if (args.serverName !== undefined)
      throw new Error('--server-name picks a server inside --config; pass --config too');
    return toolCallComparatorConfigSchema.parse(DEFAULT_TOOL_CALL_COMPARATOR_CONFIG);
  }
  let text: string;
  try {
    text = await readFile(args.config, 'utf8');
  } catch (error) {
    throw new Error(`cannot read --config ${args.config}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return loadVerifierConfigFromGymYaml(text, args.serverName);
  } catch (error) {
    throw new Error(`${args.config}: ${(error as Error).message}`, { cause: error });
  }
}

function listen(server: http.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`${host}:${port} is already in use; pick another --port (0 takes a free one)`)
          : error,
      );
    });
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export function registerVerifyServerCommand(program: Command): void {
  program
    .command('verify-server')
    .description(`serve the built-in verifier as a NeMo Gym-compatible resources server (POST /verify) until stopped`)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0 takes a free one)', parsePort, DEFAULT_VERIFY_SERVER_PORT)
    .option('--config <gym_yaml>', `NeMo Gym config YAML holding a ${VERIFIER_RESOURCES_SERVER_TYPE} resources server`)
    .option('--server-name <name>', 'top-level server name in --config, when it defines several such servers')
    .addHelpText('after', HELP)
    .action(async (raw: unknown) => {
      const args = verifyServerArgsSchema.parse(raw);
      const config = await comparatorConfig(args);
      const server = createVerifierServer(config);
      const port = await listen(server, args.host, args.port);
      const url = `http://${args.host.includes(':') ? `[${args.host}]` : args.host}:${port}`;
      console.log(
        `${VERIFIER_RESOURCES_SERVER_TYPE} resources server (NeMo Gym ${VERIFIER_NEMO_GYM_COMMIT.slice(0, 7)}, built-in verifier)`,
      );
      console.log(`url         ${url}`);
      console.log(`verify      POST ${url}/verify`);
      console.log(`comparator  ${JSON.stringify(config)}`);
      const stop = () => {
        server.close(() => process.exit(0));
        server.closeAllConnections();
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
