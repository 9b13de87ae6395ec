// NeMo Gym's `StepRewardCategory`: the member name is what code branches on, the sentence is what
// the resources server reports over HTTP and what rollouts store under `category`.
export const stepRewardCategoryText = {
  NO_ACTION_FOUND: 'No tool call or chat message was found in the response',
  NO_EXPECTED_TOOL_CALL: 'No tool call was found when one was expected',
  EXPECTED_CHAT_MESSAGE_FOUND: 'A chat message was found as expected',
  NO_EXPECTED_CHAT_MESSAGE: 'A tool call was executed when a chat message was expected',
  UNEXPECTED_TOOL: 'The tool in a tool call is not the expected tool',
  ARGUMENTS_DECODE_ERROR: 'An error occurred when decoding the arguments string in a tool call as a JSON object',
  ARGUMENT_VALUE_TYPE_DIFFERENT: 'The type of an argument value in a tool call is different than the expected type',
  ARGUMENT_OBJECT_KEYS_DIFFERENT:
    'The keys in an object in an argument value in a tool call are different than the keys in the expected object',
  ARGUMENT_LIST_LENGTH_DIFFERENT:
    'A list in an argument value in a tool call has a different length than the expected list',
  ARGUMENT_VALUE_DIFFERENT: 'An argument value in a tool call is different than the expected value',
  EXPECTED_TOOL_CALL: 'A tool call that matches the expected tool call was found',
  FUNCTION_CALL_BATCH_LENGTH_DIFFERENT: 'The number of tool calls in a batch is different than expected',
  EXPECTED_TOOL_CALL_BATCH: 'A tool-call batch that matches the expected tool calls was found',
} as const;

export type StepRewardCategory = keyof typeof stepRewardCategoryText;

/** What comparing a tool call's name and arguments can end in: every category but those decided
 * before any call is compared. */
export type ArgumentMismatch = Exclude<
  StepRewardCategory,
  'NO_ACTION_FOUND' | 'NO_EXPECTED_TOOL_CALL' | 'EXPECTED_CHAT_MESSAGE_FOUND' | 'NO_EXPECTED_CHAT_MESSAGE'
>;

export interface VerifyResult {
  readonly reward: number;
  readonly category: StepRewardCategory;
}

function verdict<C extends StepRewardCategory>(reward: 0 | 1, category: C): VerifyResult & { readonly category: C } {
  return Object.freeze({ reward, category });
}

/**
 * The verdict of each category at its all-or-nothing reward, frozen and shared: a verdict is read
 * and never changed, and a verifier that built a fresh one per response would spend a real part
 * of its time on allocation and collection. Only fractional batch rewards are built per call.
 */
export const verdictOf = {
  NO_ACTION_FOUND: verdict(0, 'NO_ACTION_FOUND'),
  NO_EXPECTED_TOOL_CALL: verdict(0, 'NO_EXPECTED_TOOL_CALL'),
  EXPECTED_CHAT_MESSAGE_FOUND: verdict(1, 'EXPECTED_CHAT_MESSAGE_FOUND'),
  NO_EXPECTED_CHAT_MESSAGE: verdict(0, 'NO_EXPECTED_CHAT_MESSAGE'),
  UNEXPECTED_TOOL: verdict(0, 'UNEXPECTED_TOOL'),
  ARGUMENTS_DECODE_ERROR: verdict(0, 'ARGUMENTS_DECODE_ERROR'),
  ARGUMENT_VALUE_TYPE_DIFFERENT: verdict(0, 'ARGUMENT_VALUE_TYPE_DIFFERENT'),
  ARGUMENT_OBJECT_KEYS_DIFFERENT: verdict(0, 'ARGUMENT_OBJECT_KEYS_DIFFERENT'),
  ARGUMENT_LIST_LENGTH_DIFFERENT: verdict(0, 'ARGUMENT_LIST_LENGTH_DIFFERENT'),
  ARGUMENT_VALUE_DIFFERENT: verdict(0, 'ARGUMENT_VALUE_DIFFERENT'),
  EXPECTED_TOOL_CALL: verdict(1, 'EXPECTED_TOOL_CALL'),
  FUNCTION_CALL_BATCH_LENGTH_DIFFERENT: verdict(0, 'FUNCTION_CALL_BATCH_LENGTH_DIFFERENT'),
  EXPECTED_TOOL_CALL_BATCH: verdict(1, 'EXPECTED_TOOL_CALL_BATCH'),
} as const satisfies { readonly [C in StepRewardCategory]: VerifyResult };
