import * as categories from './categories';
import type { ArgumentMismatch, StepRewardCategory, VerifyResult } from './categories';
import type { ToolCallComparatorConfig } from './config';
import { decodePythonJson, PythonJsonFailure, type PyDict, type PyValue } from '../pythonJson';
import * as argumentPair from './argumentPair';
import { stringsMatch } from './pythonText';

// Bound imports: see gym/verifier/index.ts.
const { compareArgumentTexts, UNDECIDED } = argumentPair;
const { verdictOf } = categories;

export interface FunctionCall {
  name: string;
  arguments: string;
}

/** Expected arguments that are not JSON: NeMo Gym raises here (a broken dataset row), so do we. */
export class ExpectedArgumentsDecodeError extends Error {
  constructor(toolName: string, failure: PythonJsonFailure) {
    super(`expected_action arguments of tool "${toolName}" are not valid JSON (${failure.toError().message})`);
    this.name = 'ExpectedArgumentsDecodeError';
  }
}

// Python's `isinstance(actual, type(expected))`. bool subclasses int, so an int accepts a bool
// but a bool does not accept an int.
function passesTypeGate(expected: PyValue, actual: PyValue): boolean {
  if (expected === null) return actual === null;
  switch (typeof expected) {
    case 'boolean':
      return typeof actual === 'boolean';
    case 'bigint':
      return typeof actual === 'bigint' || typeof actual === 'boolean';
    case 'number':
      return typeof actual === 'number';
    case 'string':
      return typeof actual === 'string';
  }
  if (Array.isArray(expected)) return Array.isArray(actual);
  return actual instanceof Map;
}

function asPythonInt(value: bigint | boolean): bigint {
  return typeof value === 'boolean' ? (value ? 1n : 0n) : value;
}

function sameKeySet(expected: PyDict, actual: PyDict): boolean {
  if (expected.size !== actual.size) return false;
  for (const key of expected.keys()) if (!actual.has(key)) return false;
  return true;
}

/** The first mismatch between two decoded argument values, or null when they match. */
export function compareArgumentValues(
  expected: PyValue,
  actual: PyValue,
  config: ToolCallComparatorConfig,
): ArgumentMismatch | null {
  if (!passesTypeGate(expected, actual)) return 'ARGUMENT_VALUE_TYPE_DIFFERENT';
  if (expected instanceof Map) {
    const actualDict = actual as PyDict;
    if (!sameKeySet(expected, actualDict)) return 'ARGUMENT_OBJECT_KEYS_DIFFERENT';
    for (const [key, value] of expected) {
      const mismatch = compareArgumentValues(value, actualDict.get(key) as PyValue, config);
      if (mismatch) return mismatch;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    const actualList = actual as PyValue[];
    if (expected.length !== actualList.length) return 'ARGUMENT_LIST_LENGTH_DIFFERENT';
    for (let i = 0; i < expected.length; i++) {
      const mismatch = compareArgumentValues(expected[i] as PyValue, actualList[i] as PyValue, config);
      if (mismatch) return mismatch;
    }
    return null;
  }
  if (typeof expected === 'number') {
    // Strict `<`: a zero threshold rejects identical floats, and NaN (also inf - inf) never matches.
    return Math.abs((actual as number) - expected) < config.floating_point_comparison_threshold
      ? null
      : 'ARGUMENT_VALUE_DIFFERENT';
  }
  if (typeof expected === 'string') {
    return stringsMatch(expected, actual as string, config.word_count_similarity_threshold)
      ? null
      : 'ARGUMENT_VALUE_DIFFERENT';
  }
  if (typeof expected === 'bigint') {
    return expected === asPythonInt(actual as bigint | boolean) ? null : 'ARGUMENT_VALUE_DIFFERENT';
  }
  return expected === actual ? null : 'ARGUMENT_VALUE_DIFFERENT';
}

/**
 * `verdictOf` for an argument comparison's outcome, most frequent first. A switch rather than
 * `verdictOf[mismatch]`: a keyed load whose key varies from call to call goes through V8's
 * megamorphic property lookup, which costs more than these identity comparisons. Null is told
 * apart first, on its own: a comparison that has met both null and strings calls a builtin each
 * time, while one that only meets literal strings compares them by identity.
 */
function argumentVerdict(mismatch: ArgumentMismatch | null): VerifyResult {
  if (mismatch === null) return verdictOf.EXPECTED_TOOL_CALL;
  switch (mismatch) {
    case 'ARGUMENT_VALUE_DIFFERENT':
      return verdictOf.ARGUMENT_VALUE_DIFFERENT;
    case 'ARGUMENT_VALUE_TYPE_DIFFERENT':
      return verdictOf.ARGUMENT_VALUE_TYPE_DIFFERENT;
    case 'ARGUMENTS_DECODE_ERROR':
      return verdictOf.ARGUMENTS_DECODE_ERROR;
    case 'ARGUMENT_OBJECT_KEYS_DIFFERENT':
      return verdictOf.ARGUMENT_OBJECT_KEYS_DIFFERENT;
    case 'ARGUMENT_LIST_LENGTH_DIFFERENT':
      return verdictOf.ARGUMENT_LIST_LENGTH_DIFFERENT;
  }
  return verdictOf[mismatch];
}

/** The decoding path, for the argument texts the in-place comparison leaves undecided. */
function compareDecodedArguments(
  expected: FunctionCall,
  actual: FunctionCall,
  config: ToolCallComparatorConfig,
): VerifyResult {
  const expectedArguments = decodePythonJson(expected.arguments);
  if (expectedArguments instanceof PythonJsonFailure)
    throw new ExpectedArgumentsDecodeError(expected.name, expectedArguments);
  const actualArguments =
    actual.arguments === expected.arguments ? expectedArguments : decodePythonJson(actual.arguments);
  if (actualArguments instanceof PythonJsonFailure) return verdictOf.ARGUMENTS_DECODE_ERROR;
  const mismatch = compareArgumentValues(expectedArguments, actualArguments, config);
  return argumentVerdict(mismatch);
}

/** NeMo Gym's `compare_tool_call`: one expected call against one actual call. */
export function compareOneCall(
  expected: FunctionCall,
  actual: FunctionCall,
  config: ToolCallComparatorConfig,
): VerifyResult {
  // The name is checked before anything is decoded, so a wrong tool with broken arguments is
  // reported as the wrong tool.
  if (expected.name !== actual.name) return verdictOf.UNEXPECTED_TOOL;
  const inPlace = compareArgumentTexts(
    expected.arguments,
    actual.arguments,
    config.floating_point_comparison_threshold,
    config.word_count_similarity_threshold,
  );
  // Null first, as in argumentVerdict.
  if (inPlace === null) return verdictOf.EXPECTED_TOOL_CALL;
  if (inPlace === UNDECIDED) return compareDecodedArguments(expected, actual, config);
  return argumentVerdict(inPlace);
}

/** Kuhn's search for an augmenting path from one expected call, candidates ascending. A module
 * function rather than a closure: a closure would be created (and, as tsx compiles it, renamed
 * with `__name`) on every batch compared. */
function augment(
  candidates: number[][],
  ownerOfActual: Map<number, number>,
  expectedIndex: number,
  visited: Set<number>,
): boolean {
  for (const actualIndex of candidates[expectedIndex] ?? []) {
    if (visited.has(actualIndex)) continue;
    visited.add(actualIndex);
    const owner = ownerOfActual.get(actualIndex);
    if (owner === undefined || augment(candidates, ownerOfActual, owner, visited)) {
      ownerOfActual.set(actualIndex, expectedIndex);
      return true;
    }
  }
  return false;
}

/**
 * Kuhn's augmenting-path maximum matching, in NeMo Gym's exact visiting order (most constrained
 * expected call first, stable; candidates ascending). The matched count is order-independent but
 * the set of unmatched expected calls is not, and the reported category comes from that set.
 * Returns the expected index matched to each actual index.
 */
export function findMaximumMatching(candidates: number[][]): Map<number, number> {
  const ownerOfActual = new Map<number, number>();
  const order = candidates.map((_, index) => index);
  order.sort((a, b) => (candidates[a]?.length ?? 0) - (candidates[b]?.length ?? 0) || a - b);
  for (const expectedIndex of order) augment(candidates, ownerOfActual, expectedIndex, new Set());
  return ownerOfActual;
}

function isCallCountAdmissible(expectedCount: number, actualCount: number, config: ToolCallComparatorConfig): boolean {
  if (actualCount === expectedCount || !config.parallel_tool_call_rewarding) return true;
  return actualCount < expectedCount ? config.allow_subset : config.allow_superset;
}

function scoreMatchedCalls(
  matchedCount: number,
  expectedCount: number,
  actualCount: number,
  config: ToolCallComparatorConfig,
): number {
  if (!config.parallel_tool_call_rewarding) return matchedCount === expectedCount ? 1 : 0;
  if (config.parallel_tool_call_reward_mode === 'f1') {
    const totalCount = expectedCount + actualCount;
    return totalCount ? (2 * matchedCount) / totalCount : 0;
  }
  const requiredCount = config.allow_subset ? Math.min(expectedCount, actualCount) : expectedCount;
  if (config.parallel_tool_call_reward_mode === 'fractional') return requiredCount ? matchedCount / requiredCount : 0;
  return matchedCount === requiredCount ? 1 : 0;
}

/** Scores the actual calls against the expected ones as an unordered set (NeMo Gym's `compare_tool_calls`). */
export function compareToolCalls(
  expected: FunctionCall[],
  actual: FunctionCall[],
  config: ToolCallComparatorConfig,
): VerifyResult {
  if (expected.length === 1 && actual.length === 1)
    return compareOneCall(expected[0] as FunctionCall, actual[0] as FunctionCall, config);
  if (!isCallCountAdmissible(expected.length, actual.length, config)) {
    return verdictOf.FUNCTION_CALL_BATCH_LENGTH_DIFFERENT;
  }

  const candidates: number[][] = [];
  // Per expected call, the first reason an actual call with the right name failed: the closest
  // near miss. Only when every actual call had another name is it UNEXPECTED_TOOL.
  const failureCategories: StepRewardCategory[] = [];
  for (const expectedCall of expected) {
    const matches: number[] = [];
    let failure: StepRewardCategory = 'UNEXPECTED_TOOL';
    actual.forEach((actualCall, actualIndex) => {
      const result = compareOneCall(expectedCall, actualCall, config);
      if (result.reward === 1) matches.push(actualIndex);
      else if (failure === 'UNEXPECTED_TOOL') failure = result.category;
    });
    candidates.push(matches);
    failureCategories.push(failure);
  }

  const matching = findMaximumMatching(candidates);
  const reward = scoreMatchedCalls(matching.size, expected.length, actual.length, config);
  if (reward === 1) {
    return verdictOf[expected.length === 1 ? 'EXPECTED_TOOL_CALL' : 'EXPECTED_TOOL_CALL_BATCH'];
  }
  const matchedExpected = new Set(matching.values());
  const firstUnmatched = expected.findIndex((_, index) => !matchedExpected.has(index));
  // With nothing left unmatched on one side, the count is the whole defect; an argument mismatch
  // would point at a comparison that did not cost the reward.
  if (firstUnmatched < 0 || matchedExpected.size === actual.length) {
    return { reward, category: 'FUNCTION_CALL_BATCH_LENGTH_DIFFERENT' };
  }
  return { reward, category: failureCategories[firstUnmatched] ?? 'UNEXPECTED_TOOL' };
}
