import { z } from 'zod';

// The `servers.faults` block of the pipeline config: injected faults in front of the embedded
// simulators (servers/faults.ts applies them), for chaos runs and failure tests.

export const FAULT_KINDS = ['http_5xx', 'http_429', 'hang', 'torn_json', 'reset', 'slow'] as const;
export const faultKindSchema = z.enum(FAULT_KINDS);
export type FaultKind = z.infer<typeof faultKindSchema>;

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const faultRuleSchema = z.strictObject({
  match: z
    .record(z.string(), scalar)
    .describe('Top-level body fields that must all be equal, e.g. {_ng_task_index: 3}'),
  kind: faultKindSchema.default('http_5xx').describe('The fault a matching request gets'),
  times: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Fail only the first N occurrences per server process; omitted = always'),
});

export type FaultRule = z.infer<typeof faultRuleSchema>;

export const serverFaultsSchema = z.strictObject({
  rate: z.number().min(0).max(1).default(0).describe('Share of requests that get a random fault of `kinds`'),
  kinds: z
    .array(faultKindSchema)
    .min(1)
    .default([...FAULT_KINDS])
    .describe('Faults random ones are drawn from'),
  // Random faults (rate and bursts) stop for a key once it has had this many: with max_attempts
  // above it, such faults are always recovered and the final artifacts match an undisturbed run.
  max_faults_per_request: z
    .number()
    .int()
    .nonnegative()
    .default(1)
    .describe('Random faults a request key gets at most'),
  burst_5xx: z
    .strictObject({
      every: z.number().int().positive().describe('Requests between bursts'),
      length: z.number().int().positive().describe('Requests answered 503 in a burst'),
    })
    .optional()
    .describe('Every `every` requests, the next `length` ones answer 503 (an overloaded server)'),
  retry_after_s: z
    .number()
    .nonnegative()
    .optional()
    .describe('Retry-After sent with 429 (default 1 s) and 503 (none by default)'),
  hang_ms: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe('How long a hung request is held before its socket is dropped'),
  slow_ms: z.number().int().nonnegative().default(1_000).describe('Delay of a slow answer'),
  rules: z.array(faultRuleSchema).default([]).describe('Faults for requests whose body matches'),
});
export type ServerFaults = z.infer<typeof serverFaultsSchema>;

export const faultsConfigSchema = z.strictObject({
  seed: z.number().int().optional().describe('Fault seed; defaults to the simulator seed'),
  agent: serverFaultsSchema.optional().describe('Faults in front of the embedded agent'),
  model: serverFaultsSchema.optional().describe('Faults in front of the simulated model'),
  events_jsonl: z
    .string()
    .min(1)
    .optional()
    .describe('Appends one line per injected fault (survives worker restarts, unlike GET /_faults)'),
});
export type FaultsConfig = z.infer<typeof faultsConfigSchema>;
