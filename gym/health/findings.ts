import {
  bindingsComplete,
  callLocator,
  failedLastCall,
  isFailed,
  isSuccessful,
  modelChains,
  type Bindings,
  type Call,
} from './calls';
import { hasToolCall, isDict, nonEmpty, responseHasContent } from './content';
import type { Trajectory } from './trajectory';

// The evidence each of 0.7.0's single-rollout checks finds in one rollout. A check finds; it does
// not judge: the rollout's verdict is derived from all findings together (rolloutDigest.ts).

export interface Finding {
  check: string;
  locator?: Record<string, string | number>;
  detail: Record<string, unknown>;
}

export const LENGTH_LIMIT_FINISH_REASONS = new Set(['length', 'max_output_tokens', 'max_tokens']);

const CONTRADICTION_KINDS: Record<string, string> = {
  model_call_reference_unmatched: 'missing_captured_call',
  model_call_reference_ambiguous: 'duplicated_captured_call',
  model_call_reference_conflict: 'conflicting_call_ownership',
};

export const referenceContradictions = (trajectory: Trajectory) =>
  trajectory.gaps.filter((gap) => gap.code in CONTRADICTION_KINDS);

function agentSteps(trajectory: Trajectory) {
  return trajectory.turns.map((turn) => ({
    locator: { turn: turn.turn_no },
    hasMessage: nonEmpty(turn.answer) || nonEmpty(turn.reasoning_content),
    hasToolCalls: hasToolCall(turn.answer),
    refs: turn.model_calls?.length ?? 0,
  }));
}

export function missingAgentTurns(trajectory: Trajectory): Finding[] {
  const active = agentSteps(trajectory).some((s) => s.hasMessage || s.hasToolCalls || s.refs > 0);
  return active
    ? []
    : [{ check: 'rollout_missing_agent_turns', detail: { reason: 'no agent turn with model activity' } }];
}

export function hollowTurns(trajectory: Trajectory): Finding[] {
  return agentSteps(trajectory)
    .filter((s) => !s.hasMessage && !s.hasToolCalls)
    .map((s) => ({
      check: 'agent_turn_hollow',
      locator: s.locator,
      detail: { reason: 'agent turn has no message or tool calls' },
    }));
}

const perCall = (b: Bindings, check: string, test: (c: Call) => boolean, detail: (c: Call) => Finding['detail']) =>
  b.matched.flatMap((call, i) => (test(call) ? [{ check, locator: callLocator(call, i), detail: detail(call) }] : []));

export const zeroCompletionTokens = (b: Bindings) =>
  perCall(
    b,
    'model_call_zero_completion_tokens',
    (c) => c.tokensOut === 0,
    () => ({ completion_tokens: 0 }),
  );

export const missingTokenCounts = (b: Bindings) =>
  perCall(
    b,
    'model_call_missing_token_counts',
    (c) => c.tokensIn === null || c.tokensOut === null,
    (c) => ({
      missing: [
        ...(c.tokensIn === null ? ['prompt_tokens'] : []),
        ...(c.tokensOut === null ? ['completion_tokens'] : []),
      ],
    }),
  );

export function captureMismatch(trajectory: Trajectory, b: Bindings): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const add = (kind: string, reference: string, extra: Record<string, unknown>, remember: boolean) => {
    const callId = reference.split(':').at(-1)!;
    const key = JSON.stringify([kind, callId]);
    if (seen.has(key)) return;
    if (remember) seen.add(key);
    findings.push({ check: 'trajectory_capture_mismatch', locator: { call_id: callId }, detail: { kind, ...extra } });
  };
  for (const reference of b.missing) add('missing_captured_call', reference, {}, true);
  for (const [reference, count] of b.duplicated) add('duplicated_captured_call', reference, { count }, true);
  for (const gap of referenceContradictions(trajectory)) {
    const extra = { observation_gap: gap.code, invocation_id: gap.invocation_id ?? null };
    add(CONTRADICTION_KINDS[gap.code]!, gap.detail || 'unknown', extra, false);
  }
  return findings;
}

export function failedCalls(b: Bindings): Finding[] {
  const terminal = b.matched.length > 0 ? Math.max(...b.matched.map((c) => c.callIndex)) : undefined;
  return perCall(b, 'model_call_failed', isFailed, (c) => ({
    status: c.statusCode,
    error_category: c.errorCategory,
    terminal: bindingsComplete(b) && terminal !== undefined && c.callIndex === terminal,
  }));
}

export function endedOnFailedCall(calls: readonly Call[]): Finding[] {
  const findings: Finding[] = [];
  for (const [model, chain] of modelChains(calls)) {
    const last = failedLastCall(chain);
    if (last === undefined) continue;
    findings.push({
      check: 'rollout_ended_on_failed_model_call',
      locator: callLocator(last, last.callIndex),
      detail: {
        model_ref: model,
        status: last.statusCode,
        error_category: last.errorCategory,
        observed_calls: chain.length,
        successful_calls: chain.filter(isSuccessful).length,
      },
    });
  }
  return findings;
}

const tokenCount = (n: unknown): number | null => (Number.isInteger(n) && (n as number) >= 0 ? (n as number) : null);

/** The rollout's own token usage (its response's `usage`), and whether both counts are there. */
export function transcriptTokens(record: Record<string, unknown>): {
  prompt: number;
  completion: number;
  both: boolean;
} {
  const usage = isDict(record.response) ? record.response.usage : undefined;
  if (!isDict(usage)) return { prompt: 0, completion: 0, both: false };
  const prompt = tokenCount('input_tokens' in usage ? usage.input_tokens : usage.prompt_tokens);
  const completion = tokenCount('output_tokens' in usage ? usage.output_tokens : usage.completion_tokens);
  return { prompt: prompt ?? 0, completion: completion ?? 0, both: prompt !== null && completion !== null };
}

export function tokenCountMismatch(record: Record<string, unknown>, b: Bindings): Finding[] {
  const transcript = transcriptTokens(record);
  const capturePrompt = b.matched.reduce((sum, c) => sum + (c.tokensIn ?? 0), 0);
  const captureCompletion = b.matched.reduce((sum, c) => sum + (c.tokensOut ?? 0), 0);
  if (!transcript.both || (transcript.prompt === capturePrompt && transcript.completion === captureCompletion))
    return [];
  const detail = {
    transcript_prompt: transcript.prompt,
    transcript_completion: transcript.completion,
    capture_prompt: capturePrompt,
    capture_completion: captureCompletion,
  };
  return [{ check: 'rollout_token_count_mismatch', detail }];
}

export const runawayGeneration = (b: Bindings) =>
  perCall(
    b,
    'model_call_runaway_generation',
    (c) =>
      c.finishReason !== null && LENGTH_LIMIT_FINISH_REASONS.has(c.finishReason) && !responseHasContent(c.response),
    (c) => ({ finish_reason: c.finishReason }),
  );
