// A NeMo Gym-compatible `single_step_tool_use_with_argument_comparison` resources server: agents
// POST `/verify` with the row plus the model's response and get the row back with `reward` and
// `category`, exactly as from NeMo Gym's own server.
import http from 'node:http';
import YAML from 'yaml';
import { z } from 'zod';
import { expectedActionSchema, responsesCreateParamsSchema } from '../gym/schemas';
import {
  ExpectedArgumentsDecodeError,
  stepRewardCategoryText,
  toolCallComparatorConfigSchema,
  verifierResponseSchema,
  verifyResponse,
  type ToolCallComparatorConfig,
  type ToolCallComparatorConfigInput,
} from '../gym/verifier';
import { HttpError, sendJson } from './http';

export const VERIFIER_RESOURCES_SERVER_TYPE = 'single_step_tool_use_with_argument_comparison';

/**
 * The NeMo Gym commit whose resources server this reproduces: test/fixtures/verifier's vectors were made
 * by running that server's code. NeMo Gym 0.4.0's copy of the server has the same request and
 * response fields but no `function_call_batch` rows or parallel reward modes.
 */
export const VERIFIER_NEMO_GYM_COMMIT = '07d6b0d07b22fcf530b4c211dae2ee23100428e4';

// Rollout responses carry whole trajectories; this only guards against a runaway client.
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** NeMo Gym's verify request for this server: the row's fields plus the model's `response`. */
export const verifyRequestSchema = z.looseObject({
  responses_create_params: responsesCreateParamsSchema,
  expected_action: expectedActionSchema,
  response: verifierResponseSchema,
});
export type VerifyRequest = z.infer<typeof verifyRequestSchema>;

interface ValidationDetail {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** A 422 whose body is FastAPI's `{"detail": [{loc, msg, type}]}` (see createVerifierServer). */
function validationError(details: ValidationDetail[]): HttpError {
  return new HttpError(422, details.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '), details);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // An oversized body is drained rather than cut off, so the client still gets the 413.
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) reject(new HttpError(413, `request body exceeds ${MAX_BODY_BYTES} bytes`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

// Errors are shaped like FastAPI's (`{"detail": [{loc, msg, type}]}`) so NeMo Gym clients that
// report 422s keep working against this server.
function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw validationError([
      { loc: ['body'], msg: `body is not JSON: ${(error as Error).message}`, type: 'json_invalid' },
    ]);
  }
}

function verify(body: unknown, config: ToolCallComparatorConfig): Record<string, unknown> {
  const parsed = verifyRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw validationError(
      parsed.error.issues.map((issue) => ({
        loc: ['body', ...issue.path.map((key) => (typeof key === 'number' ? key : String(key)))],
        msg: issue.message,
        type: issue.code,
      })),
    );
  }
  const request = parsed.data;
  let result;
  try {
    result = verifyResponse(request.expected_action, request.response, config);
  } catch (error) {
    if (error instanceof ExpectedArgumentsDecodeError) {
      throw validationError([
        { loc: ['body', 'expected_action', 'arguments'], msg: error.message, type: 'json_invalid' },
      ]);
    }
    throw error;
  }
  // NeMo Gym's request model ignores extra row fields, so its response echoes only these; the
  // category goes over the wire as its sentence (a StrEnum value), which is what rollouts store.
  return {
    responses_create_params: request.responses_create_params,
    response: request.response,
    reward: result.reward,
    expected_action: request.expected_action,
    category: stepRewardCategoryText[result.category],
  };
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse, config: ToolCallComparatorConfig) {
  const route = (req.url ?? '/').split('?')[0];
  if (route !== '/verify' && route !== '/seed_session') throw new HttpError(404, 'Not Found');
  if (req.method !== 'POST') throw new HttpError(405, 'Method Not Allowed');
  const text = await readBody(req);
  // Agents seed a session before each rollout; this server keeps no per-session state.
  if (route === '/seed_session') return sendJson(res, 200, {});
  sendJson(res, 200, verify(parseJsonBody(text), config));
}

/** The resources server as a node `http.Server`; the caller listens. */
export function createVerifierServer(config: ToolCallComparatorConfigInput): http.Server {
  const comparatorConfig = toolCallComparatorConfigSchema.parse(config);
  return http.createServer((req, res) => {
    handle(req, res, comparatorConfig).catch((error: unknown) => {
      if (res.headersSent) return res.destroy();
      // FastAPI's shape, not the embedded servers' `{error, details}`: a validation error's detail
      // is its list, any other error's its message.
      if (error instanceof HttpError) return sendJson(res, error.status, { detail: error.details ?? error.message });
      sendJson(res, 500, { detail: `internal error: ${(error as Error).message ?? String(error)}` });
    });
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function verifierBlocks(document: unknown): Map<string, unknown> {
  const blocks = new Map<string, unknown>();
  if (!isRecord(document)) return blocks;
  for (const [serverName, block] of Object.entries(document)) {
    if (!isRecord(block) || !isRecord(block.resources_servers)) continue;
    const server = block.resources_servers[VERIFIER_RESOURCES_SERVER_TYPE];
    if (isRecord(server)) blocks.set(serverName, server.tool_call_comparator_config);
  }
  return blocks;
}

/**
 * `tool_call_comparator_config` of a `single_step_tool_use_with_argument_comparison` resources
 * server in a NeMo Gym config YAML, with NeMo Gym's defaults applied. `serverName` (the top-level
 * key) is required only when the YAML defines several such servers.
 */
export function loadVerifierConfigFromGymYaml(yamlText: string, serverName?: string): ToolCallComparatorConfig {
  const blocks = verifierBlocks(YAML.parse(yamlText));
  let name = serverName;
  if (name === undefined) {
    if (blocks.size !== 1) {
      const found = blocks.size ? `several: ${[...blocks.keys()].join(', ')}; pass a server name` : 'none';
      throw new Error(`expected one ${VERIFIER_RESOURCES_SERVER_TYPE} resources server in the config, found ${found}`);
    }
    [name] = blocks.keys();
  }
  if (name === undefined || !blocks.has(name)) {
    throw new Error(`no ${VERIFIER_RESOURCES_SERVER_TYPE} resources server named "${serverName}" in the config`);
  }
  const parsed = toolCallComparatorConfigSchema.safeParse(blocks.get(name));
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(block)'}: ${issue.message}`);
    throw new Error(
      `${name}.resources_servers.${VERIFIER_RESOURCES_SERVER_TYPE}.tool_call_comparator_config: ${reasons.join('; ')}`,
    );
  }
  return parsed.data;
}
