// Port of the verdict of NeMo Gym's `single_step_tool_use_with_argument_comparison` resources
// server: the reward of one response against a pivot row's `expected_action`. Parity with the
// reference is checked against test/fixtures/verifier/vectors.jsonl.
import type { ExpectedAction } from '../schemas';
import type { VerifyResult } from './categories';
import * as categories from './categories';
import * as compare from './compare';
import type { FunctionCall } from './compare';
import * as comparatorConfig from './config';
import type { ToolCallComparatorConfig, ToolCallComparatorConfigInput } from './config';
import * as extract from './extract';

export { stepRewardCategoryText, type StepRewardCategory, type VerifyResult } from './categories';
export { ExpectedArgumentsDecodeError } from './compare';
export {
  parallelToolCallRewardModeSchema,
  toolCallComparatorConfigSchema,
  type ToolCallComparatorConfig,
  type ToolCallComparatorConfigInput,
} from './config';
export { extractAction, verifierResponseSchema, type VerifierResponse } from './extract';

// Bound imports. The verifier's modules import their siblings as namespaces and copy what they
// call into module constants once (`const { verdictOf } = categories;`). Compiled to CommonJS (tsx,
// the bundles), every use of a named import reads the exporting module's getter, a call; on paths
// that run per verified response, per tool call or per character, that call costs more than the
// work it reaches. A module constant is a plain load. The other verifier modules point here.
const { compareOneCall, compareToolCalls } = compare;
const { verdictOf } = categories;
const { resolveComparatorConfig } = comparatorConfig;
const { extractAction } = extract;

function toolCallsOf(action: ExpectedAction): FunctionCall[] {
  if (action.type === 'function_call_batch') return action.calls;
  if (action.type === 'function_call') return [action];
  return [];
}

/** NeMo Gym's `ActionComparator.compare_action` for an already extracted action. */
export function compareAction(
  expectedAction: ExpectedAction,
  actualAction: ExpectedAction,
  config: ToolCallComparatorConfig,
): VerifyResult {
  if (expectedAction.type === 'message') {
    // The message content is never compared: any chat message is the expected kind of action.
    return actualAction.type === 'message' ? verdictOf.EXPECTED_CHAT_MESSAGE_FOUND : verdictOf.NO_EXPECTED_CHAT_MESSAGE;
  }
  if (actualAction.type === 'message') return verdictOf.NO_EXPECTED_TOOL_CALL;
  if (expectedAction.type === 'function_call' && actualAction.type === 'function_call')
    return compareOneCall(expectedAction, actualAction, config);
  return compareToolCalls(toolCallsOf(expectedAction), toolCallsOf(actualAction), config);
}

/**
 * Reward and `StepRewardCategory` member name of `response` (only its `output` is read) against a
 * row's `expected_action`, as NeMo Gym's `verify()` computes them. `config` is a
 * `tool_call_comparator_config`; omitted optional keys take NeMo Gym's defaults. Throws
 * `ExpectedArgumentsDecodeError` when the row's own arguments are not JSON (the reference raises).
 */
export function verifyResponse(
  expectedAction: ExpectedAction,
  response: { output: readonly unknown[] },
  config: ToolCallComparatorConfigInput,
): VerifyResult {
  const actualAction = extractAction(response.output);
  if (actualAction === null) return verdictOf.NO_ACTION_FOUND;
  return compareAction(expectedAction, actualAction, resolveComparatorConfig(config));
}
