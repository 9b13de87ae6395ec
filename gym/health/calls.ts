import type { ModelCallRef, ModelServerRef, Trajectory } from './trajectory';

// A trajectory's model calls as 0.7.0's health checks see them, and how the calls its turns and
// agent invocations name are found among them. A reference resolves by model_call_id, or by
// (model server, response id); a call that failed usually carries neither, so it is bound to
// nothing however the agent names it.

export interface Call {
  /** Position in the trajectory's list, which is not the order the calls were made in. */
  callIndex: number;
  startedAt: number | null;
  modelCallId: string | null;
  responseId: string | null;
  modelRef: ModelServerRef | null;
  statusCode: number | null;
  responseStatus: string | null;
  finishReason: string | null;
  errorCategory: string | null;
  tokensIn: number | null;
  tokensOut: number | null;
  response: unknown;
}

export function normalizedCalls(trajectory: Trajectory): Call[] {
  return trajectory.model_calls.map((raw, callIndex) => {
    const meta = raw.response_metadata ?? {};
    const tokens = raw.token_stats ?? {};
    return {
      callIndex,
      startedAt: raw.started_at ?? null,
      modelCallId: raw.model_call_id ?? null,
      responseId: meta.response_id ?? null,
      modelRef: meta.model_ref ?? null,
      statusCode: meta.status_code ?? null,
      responseStatus: meta.response_status ?? null,
      finishReason: meta.finish_reason ?? null,
      errorCategory: meta.error_category ?? null,
      tokensIn: tokens.prompt_tokens ?? null,
      tokensOut: tokens.completion_tokens ?? null,
      response: raw.response ?? null,
    };
  });
}

const FAILED_RESPONSE_STATUSES = new Set(['failed', 'error', 'cancelled']);

export function isFailed(call: Call): boolean {
  return (
    (call.statusCode !== null && call.statusCode >= 400) ||
    Boolean(call.errorCategory) ||
    (call.responseStatus !== null && FAILED_RESPONSE_STATUSES.has(call.responseStatus))
  );
}

export function isSuccessful(call: Call): boolean {
  return !isFailed(call) && (call.statusCode === null || (call.statusCode >= 200 && call.statusCode < 400));
}

const responseKey = (ref: ModelServerRef, responseId: string) => `response:${ref.type}:${ref.name}:${responseId}`;

/** The key a reference names a call by; every valid reference has one. */
export function refKey(ref: ModelCallRef): string {
  if (ref.model_call_id) return `call:${ref.model_call_id}`;
  return responseKey(ref.model_ref!, ref.response_id!);
}

/** The identity a replayed call repeats: Gym's per-call id, else the provider's response id. */
export function callIdentity(call: Call): string | null {
  if (call.modelCallId) return `call:${call.modelCallId}`;
  if (call.modelRef && call.responseId) return responseKey(call.modelRef, call.responseId);
  if (call.responseId) return `response::${call.responseId}`;
  return null;
}

export function callLocator(call: Call, fallback: number): { call_id: string } {
  return { call_id: call.modelCallId || call.responseId || String(fallback) };
}

export interface Bindings {
  references: string[];
  matched: Call[];
  missing: string[];
  duplicated: Array<[string, number]>;
}

export const bindingsComplete = (b: Bindings): boolean =>
  b.references.length > 0 && b.missing.length === 0 && b.duplicated.length === 0;

const signature = (ref: ModelCallRef): string =>
  JSON.stringify([
    ref.model_call_id ?? '',
    ref.model_ref?.type ?? '',
    ref.model_ref?.name ?? '',
    ref.response_id ?? '',
  ]);

function dedupe(refs: Iterable<ModelCallRef>): ModelCallRef[] {
  const seen = new Map<string, ModelCallRef>();
  for (const ref of refs) if (!seen.has(signature(ref))) seen.set(signature(ref), ref);
  return [...seen.values()];
}

const sameRef = (a: ModelServerRef, b: ModelServerRef | null) => b !== null && a.type === b.type && a.name === b.name;

function resolve(ref: ModelCallRef, calls: readonly Call[]): Call[] {
  if (ref.model_call_id) {
    return calls.filter(
      (call) =>
        call.modelCallId === ref.model_call_id &&
        (ref.model_ref == null || sameRef(ref.model_ref, call.modelRef)) &&
        (ref.response_id == null || ref.response_id === call.responseId),
    );
  }
  return calls.filter((call) => sameRef(ref.model_ref!, call.modelRef) && call.responseId === ref.response_id);
}

function bind(refs: readonly ModelCallRef[], calls: readonly Call[]): Bindings {
  const b: Bindings = { references: refs.map(refKey), matched: [], missing: [], duplicated: [] };
  const matched = new Set<Call>();
  for (const ref of refs) {
    const matches = resolve(ref, calls);
    if (matches.length === 0) b.missing.push(refKey(ref));
    else if (matches.length > 1) b.duplicated.push([refKey(ref), matches.length]);
    else matched.add(matches[0]!);
  }
  b.matched = [...matched].sort((x, y) => x.callIndex - y.callIndex);
  return b;
}

/** The calls the turns name, and the calls the turns or the agent invocations name. */
export function bindPolicyCalls(trajectory: Trajectory | undefined, calls: readonly Call[]) {
  const turnRefs = dedupe((trajectory?.turns ?? []).flatMap((t) => t.model_calls ?? []));
  const invocationRefs = (trajectory?.invocations ?? []).flatMap((i) => i.model_calls ?? []);
  return { turn: bind(turnRefs, calls), owned: bind(dedupe([...turnRefs, ...invocationRefs]), calls) };
}

/** Calls grouped by the model server they went to, in the order each model is first seen. */
export function modelChains(calls: readonly Call[]): Map<string | null, Call[]> {
  const chains = new Map<string | null, Call[]>();
  for (const call of calls) {
    const key = call.modelRef ? `${call.modelRef.type}/${call.modelRef.name}` : null;
    chains.set(key, [...(chains.get(key) ?? []), call]);
  }
  return chains;
}

const inTime = (chain: readonly Call[]) =>
  [...chain].sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0) || a.callIndex - b.callIndex);

/**
 * The chain's last call in time when it failed. Without start times a chain with a success in it
 * cannot be ordered, and a rollout that may have recovered is not called unhealthy.
 */
export function failedLastCall(chain: readonly Call[]): Call | undefined {
  const failed = chain.filter(isFailed);
  if (failed.length === 0) return undefined;
  if (failed.length < chain.length && chain.some((call) => call.startedAt === null)) return undefined;
  const last = inTime(chain).at(-1)!;
  return isFailed(last) ? last : undefined;
}
