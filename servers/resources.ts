import { z } from 'zod';
import { aggregateMetricsRequestSchema } from '../gym/aggregateMetrics';
import { aggregateMetricsAnswer070 } from '../gym/aggregateMetricsAnswer';
import { responsesCreateParamsSchema } from '../gym/schemas';
import { AGGREGATE_METRICS_BODY_LIMIT_BYTES } from './agent';
import { HttpError, listenJson, notFound, parseBody, requireMethod, type RunningServer } from './http';
import { answerMatches, callTool, isToolName, toolArgumentSchemas, toolCallMatches } from './toolEnvironment';

// The travel-assistant resources server, NeMo Gym style: `POST /<tool_name>` runs a tool,
// `POST /verify` scores a whole trajectory against the ground truth carried by the task row itself,
// `POST /aggregate_metrics` summarizes verify responses as every NeMo Gym 0.7.0 resources server does
// by default (base_resources_server.py SimpleResourcesServer.aggregate_metrics).

const expectedToolCallSchema = z.object({ name: z.string(), arguments: z.record(z.string(), z.unknown()) });

/** A verify request: the task row (with its ground-truth fields) plus the agent's final `response`. */
export const travelVerifyRequestSchema = z.looseObject({
  responses_create_params: responsesCreateParamsSchema,
  response: z.looseObject({ output: z.array(z.looseObject({})) }),
  expected_answer: z.string(),
  expected_tool_calls: z.array(expectedToolCallSchema),
});
export type TravelVerifyRequest = z.infer<typeof travelVerifyRequestSchema>;

function outputText(item: Record<string, unknown>): string {
  const content = item.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) =>
      typeof p === 'object' && p !== null && typeof (p as { text?: unknown }).text === 'string'
        ? (p as { text: string }).text
        : '',
    )
    .join('');
}

function parseArguments(text: unknown): unknown {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reward 1.0 when the trajectory ends with an assistant message stating the expected answer and
 * every expected tool call was made (extra or failed calls along the way are allowed), else 0.0.
 */
export function verifyTrajectory(request: TravelVerifyRequest): TravelVerifyRequest & {
  reward: number;
  answer_correct: boolean;
  tool_calls_correct: boolean;
  num_tool_calls: number;
} {
  const output = request.response.output;
  const calls = output
    .filter((i) => i.type === 'function_call')
    .map((i) => ({ name: String(i.name), arguments: parseArguments(i.arguments) }));
  const lastAction = [...output]
    .reverse()
    .find(
      (i) => i.type === 'function_call' || (i.role === 'assistant' && (i.type === 'message' || i.type === undefined)),
    );
  const finalText = lastAction && lastAction.type !== 'function_call' ? outputText(lastAction) : undefined;
  const answerCorrect = finalText !== undefined && answerMatches(request.expected_answer, finalText);
  const toolCallsCorrect = request.expected_tool_calls.every((expected) =>
    calls.some((actual) => toolCallMatches(expected, actual)),
  );
  return {
    ...request,
    reward: answerCorrect && toolCallsCorrect ? 1.0 : 0.0,
    answer_correct: answerCorrect,
    tool_calls_correct: toolCallsCorrect,
    num_tool_calls: calls.length,
  };
}

export async function startResourcesServer(options: { host?: string; port?: number } = {}): Promise<RunningServer> {
  return listenJson({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    bodyLimitBytes: AGGREGATE_METRICS_BODY_LIMIT_BYTES,
    handler: (request) => {
      if (request.path === '/health') return { body: { status: 'ok' } };
      requireMethod(request, 'POST');
      if (request.path === '/verify')
        return { body: verifyTrajectory(parseBody(travelVerifyRequestSchema, request.body)) };
      if (request.path === '/aggregate_metrics') {
        parseBody(aggregateMetricsRequestSchema, request.body);
        return { text: aggregateMetricsAnswer070(request.text) };
      }
      // The environment is stateless, so a session needs no seeding; the route exists so agents
      // written for NeMo Gym resources servers work unchanged.
      if (request.path === '/seed_session') return { body: {} };
      const name = request.path.slice(1);
      if (!isToolName(name)) return notFound(request);
      if (request.body === undefined) throw new HttpError(422, `${name} needs a JSON object of arguments`);
      return { body: callTool(name, parseBody(toolArgumentSchemas[name], request.body)) };
    },
  });
}
