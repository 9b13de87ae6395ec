import {
  bindingsComplete,
  bindPolicyCalls,
  callIdentity,
  failedLastCall,
  isFailed,
  isSuccessful,
  modelChains,
  normalizedCalls,
  type Bindings,
} from './calls';
import {
  captureMismatch,
  endedOnFailedCall,
  failedCalls,
  hollowTurns,
  LENGTH_LIMIT_FINISH_REASONS,
  missingAgentTurns,
  missingTokenCounts,
  referenceContradictions,
  runawayGeneration,
  tokenCountMismatch,
  transcriptTokens,
  zeroCompletionTokens,
  type Finding,
} from './findings';
import { isDict, truthy } from './content';
import { ROLLOUT_SPECS, type CheckSpec } from './registry';
import { canonicalTrajectory, hasGap, type Trajectory } from './trajectory';

// One rollout record through 0.7.0's single-rollout checks: the findings, the checks its evidence
// could not answer, its verdict (unhealthy on any finding, else unobserved on any unanswered check,
// else healthy), and the figures the run's summary adds up.

export type Verdict = 'healthy' | 'unhealthy' | 'unobserved';
export type Index = number | string | boolean | null;

/** The figures of one rollout the run's summary adds up. */
export interface RolloutStats {
  captureObserved: boolean;
  /** Every call the turns name was found, exactly once, and the turns name all the policy's calls. */
  policyCallsObserved: boolean;
  successfulModelCalls: number;
  modelCallErrors: number;
  errorsByStatus: Map<string, number>;
  endedOnError: boolean;
  duplicatedCalls: number;
  transcriptPrompt: number;
  transcriptCompletion: number;
  capturePrompt: number;
  captureCompletion: number;
}

export interface RolloutDigest extends RolloutStats {
  taskIndex: Index;
  rolloutIndex: Index;
  stageIndex: Index;
  rolloutId: string;
  verdict: Verdict;
  findings: Finding[];
  unobserved: string[];
}

/** Where a record was read from, for identities 0.7.0 makes up when the record has none. */
export interface RecordSource {
  file: string;
  /** Position among the non-blank lines of all the files read. */
  ordinal: number;
  sourceIndex: number;
  line: number;
}

interface Evidence {
  record: Record<string, unknown>;
  trajectory?: Trajectory;
  trajectoryError?: string;
  turnsObserved: boolean;
  callsObserved: boolean;
  turnScopeComplete: boolean;
  calls: ReturnType<typeof normalizedCalls>;
  bindings: ReturnType<typeof bindPolicyCalls>;
}

const INCOMPLETE_CALL_GAPS = new Set([
  'model_calls_unavailable',
  'model_call_capture_incomplete',
  'model_call_capture_records_unreadable',
  'model_call_capture_unreadable',
]);

function evidenceOf(record: Record<string, unknown>): Evidence {
  const { trajectory: parsed, error } = canonicalTrajectory(record);
  const trajectory = parsed && !hasGap(parsed, new Set(['trajectory_projection_failed'])) ? parsed : undefined;
  const calls = trajectory ? normalizedCalls(trajectory) : [];
  return {
    record,
    trajectory,
    ...(error ? { trajectoryError: error } : {}),
    turnsObserved: trajectory !== undefined && !hasGap(trajectory, new Set(['turns_unavailable'])),
    callsObserved: trajectory !== undefined && !hasGap(trajectory, INCOMPLETE_CALL_GAPS),
    turnScopeComplete: trajectory !== undefined && !hasGap(trajectory, new Set(['turn_model_call_scope_incomplete'])),
    calls,
    bindings: bindPolicyCalls(trajectory, calls),
  };
}

function bindingsFor(spec: CheckSpec, e: Evidence): Bindings | undefined {
  if (spec.reads.includes('owned_model_calls')) return e.bindings.owned;
  if (spec.reads.includes('bound_calls')) return e.bindings.turn;
  return undefined;
}

/** Whether the record holds what the check reads; 0.7.0's order of questions, each with its own answer. */
function observable(spec: CheckSpec, e: Evidence, b: Bindings | undefined): boolean {
  const t = e.trajectory;
  if (spec.reads.includes('trajectory') && t === undefined) return false;
  if (spec.reads.includes('agent_turns') && !e.turnsObserved) return false;
  if (spec.reads.includes('observed_model_calls') && !(e.callsObserved && e.calls.length > 0)) return false;
  if (b !== undefined) {
    if (!e.callsObserved) return false;
    const bound =
      spec.id === 'trajectory_capture_mismatch'
        ? b.references.length > 0 || referenceContradictions(t!).length > 0
        : b.matched.length > 0;
    if (!bound) return false;
  }
  if (spec.id === 'rollout_token_count_mismatch') {
    const counted = b!.matched.every((c) => c.tokensIn !== null && c.tokensOut !== null);
    return e.turnScopeComplete && bindingsComplete(b!) && transcriptTokens(e.record).both && counted;
  }
  if (spec.id === 'model_call_runaway_generation')
    return !b!.matched.some(
      (c) => c.finishReason !== null && LENGTH_LIMIT_FINISH_REASONS.has(c.finishReason) && c.response === null,
    );
  return true;
}

function runCheck(id: string, e: Evidence, b: Bindings | undefined): Finding[] {
  const t = e.trajectory!;
  switch (id) {
    case 'rollout_missing_agent_turns':
      return missingAgentTurns(t);
    case 'rollout_ended_on_failed_model_call':
      return endedOnFailedCall(e.calls);
    case 'agent_turn_hollow':
      return hollowTurns(t);
    case 'model_call_zero_completion_tokens':
      return zeroCompletionTokens(b!);
    case 'model_call_missing_token_counts':
      return missingTokenCounts(b!);
    case 'trajectory_capture_mismatch':
      return captureMismatch(t, b!);
    case 'model_call_failed':
      return failedCalls(b!);
    case 'rollout_token_count_mismatch':
      return tokenCountMismatch(e.record, b!);
    case 'model_call_runaway_generation':
      return runawayGeneration(b!);
    default:
      return [];
  }
}

function checkRecord(e: Evidence, ignored: ReadonlySet<string>): { findings: Finding[]; unobserved: string[] } {
  const findings: Finding[] = [];
  const unobserved: string[] = [];
  for (const spec of ROLLOUT_SPECS) {
    if (ignored.has(spec.id)) continue;
    if (e.trajectoryError && spec.id === 'record_unreadable') {
      const detail = { reason: 'canonical trajectory is unreadable', error: e.trajectoryError };
      findings.push({ check: 'record_unreadable', detail });
      continue;
    }
    const b = bindingsFor(spec, e);
    if (!observable(spec, e, b)) {
      unobserved.push(spec.id);
      continue;
    }
    try {
      findings.push(...runCheck(spec.id, e, b));
    } catch (err) {
      unobserved.push(spec.id);
      if (!ignored.has('check_execution_error')) {
        const error = err instanceof TypeError ? 'AttributeError' : 'Exception';
        const detail = { reason: 'check raised an unexpected exception', failed_check: spec.id, error };
        findings.push({ check: 'check_execution_error', detail });
      }
    }
  }
  return { findings, unobserved };
}

function statsOf(e: Evidence): RolloutStats {
  const failed = e.calls.filter(isFailed);
  const errorsByStatus = new Map<string, number>();
  for (const call of failed) {
    const status = call.statusCode === null ? 'unknown' : String(call.statusCode);
    errorsByStatus.set(status, (errorsByStatus.get(status) ?? 0) + 1);
  }
  const identities = new Map<string, number>();
  for (const identity of e.calls.map(callIdentity)) {
    if (identity !== null) identities.set(identity, (identities.get(identity) ?? 0) + 1);
  }
  const transcript = transcriptTokens(e.record);
  return {
    captureObserved: e.calls.length > 0,
    policyCallsObserved: e.turnScopeComplete && bindingsComplete(e.bindings.turn),
    successfulModelCalls: e.bindings.turn.matched.filter(isSuccessful).length,
    modelCallErrors: failed.length,
    errorsByStatus,
    endedOnError: [...modelChains(e.calls).values()].some((chain) => failedLastCall(chain) !== undefined),
    duplicatedCalls: [...identities.values()].reduce((sum, n) => sum + n - 1, 0),
    transcriptPrompt: transcript.prompt,
    transcriptCompletion: transcript.completion,
    capturePrompt: e.calls.reduce((sum, c) => sum + (c.tokensIn ?? 0), 0),
    captureCompletion: e.calls.reduce((sum, c) => sum + (c.tokensOut ?? 0), 0),
  };
}

/** Python's str() of an index, as 0.7.0 keys tasks and makes up rollout ids. */
export function pyStr(value: Index): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

const isIndex = (value: unknown): value is Index =>
  value === null || ['number', 'string', 'boolean'].includes(typeof value);

function unreadable(source: RecordSource, error: string, ignored: ReadonlySet<string>): RolloutDigest {
  const taskIndex = `__unreadable_record__:input-${source.sourceIndex}:line-${source.line}`;
  const findings: Finding[] = ignored.has('record_unreadable')
    ? []
    : [
        {
          check: 'record_unreadable',
          locator: { source_file: source.file, line: source.line },
          detail: { reason: 'rollout record is unreadable', error },
        },
      ];
  const unobserved = ROLLOUT_SPECS.filter((s) => s.id !== 'record_unreadable' && !ignored.has(s.id)).map((s) => s.id);
  const verdict: Verdict = findings.length > 0 ? 'unhealthy' : unobserved.length > 0 ? 'unobserved' : 'healthy';
  return {
    taskIndex,
    rolloutIndex: 0,
    stageIndex: null,
    rolloutId: `${taskIndex}-0`,
    verdict,
    findings,
    unobserved,
    ...statsOf(evidenceOf({})),
  };
}

/** One line of a rollouts file through the single-rollout checks. */
export function digestRecord(text: string, source: RecordSource, ignored: ReadonlySet<string>): RolloutDigest {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return unreadable(source, 'JSONDecodeError', ignored);
  }
  if (!isDict(record)) return unreadable(source, 'ValueError', ignored);
  const taskIndex = '_ng_task_index' in record ? record._ng_task_index : source.ordinal;
  const rolloutIndex = '_ng_rollout_index' in record ? record._ng_rollout_index : 0;
  const stageIndex = record.stage_index ?? null;
  if (!isIndex(taskIndex) || !isIndex(rolloutIndex) || !isIndex(stageIndex))
    return unreadable(source, 'TypeError', ignored);
  const e = evidenceOf(record);
  const { findings, unobserved } = checkRecord(e, ignored);
  const trajectoryRolloutId = isDict(record.ng_trajectory) ? record.ng_trajectory.rollout_id : undefined;
  const id = [record._ng_rollout_id, trajectoryRolloutId].find(truthy);
  return {
    taskIndex,
    rolloutIndex,
    stageIndex,
    rolloutId:
      id === undefined ? `${pyStr(taskIndex)}-${pyStr(rolloutIndex)}` : isIndex(id) ? pyStr(id) : JSON.stringify(id),
    verdict: findings.length > 0 ? 'unhealthy' : unobserved.length > 0 ? 'unobserved' : 'healthy',
    findings,
    unobserved,
    ...statsOf(e),
  };
}
