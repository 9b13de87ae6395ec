import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, ScheduleOverlapPolicy, type ScheduleDescription, type ScheduleOptions } from '@temporalio/client';
import { z } from 'zod';
import type { NightlyMiningResult } from '../contracts/poolPayloads';
// Types only: the client starts workflows by type name, so no workflow code is loaded into it.
import type { nightlyMiningWorkflow } from '../workflows';
import { nightlyMiningInputSchema } from '../contracts/workflowInputs';
import { taskQueueFromEnv } from '../workers/connection';

// Nightly incremental mining as a Temporal Schedule. The same settings render as the equivalent
// `temporal schedule create` command, so an operator can create it without our CLI.

export const NIGHTLY_WORKFLOW_TYPE = 'nightlyMiningWorkflow';

export const OVERLAP_POLICIES = {
  skip: { sdk: ScheduleOverlapPolicy.SKIP, cli: 'Skip' },
  buffer_one: { sdk: ScheduleOverlapPolicy.BUFFER_ONE, cli: 'BufferOne' },
  buffer_all: { sdk: ScheduleOverlapPolicy.BUFFER_ALL, cli: 'BufferAll' },
  cancel_other: { sdk: ScheduleOverlapPolicy.CANCEL_OTHER, cli: 'CancelOther' },
  terminate_other: { sdk: ScheduleOverlapPolicy.TERMINATE_OTHER, cli: 'TerminateOther' },
  allow_all: { sdk: ScheduleOverlapPolicy.ALLOW_ALL, cli: 'AllowAll' },
} as const;

/** Go-style durations (`1h`, `5m`, `90s`, `1h30m`), which is what the Temporal CLI takes too. */
const durationSchema = z
  .string()
  .regex(/^(?=\d)(\d+h)?(\d+m)?(\d+s)?$/, 'a duration like 1h, 5m, 30s or 1h30m')
  .transform((s) => {
    const part = (unit: string) => Number(s.match(new RegExp(`(\\d+)${unit}`))?.[1] ?? 0);
    return { text: s, ms: ((part('h') * 60 + part('m')) * 60 + part('s')) * 1000 };
  });

const timeZoneSchema = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, 'an IANA time zone name such as UTC or Europe/Berlin');

export const nightlyScheduleSchema = z.strictObject({
  schedule_id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a letter or digit, then letters, digits, dot, underscore and dash'),
  input: nightlyMiningInputSchema,
  cron: z
    .string()
    .refine(
      (c) => c.trim().split(/\s+/).length === 5 || c.trim().startsWith('@'),
      'a 5-field cron expression such as "0 2 * * *"',
    ),
  time_zone: timeZoneSchema.default('UTC'),
  overlap: z.enum(Object.keys(OVERLAP_POLICIES) as [keyof typeof OVERLAP_POLICIES]).default('skip'),
  catchup_window: durationSchema.prefault('1h'),
  jitter: durationSchema.prefault('0s'),
  /** Default: PIVOT_MINER_TASK_QUEUE, else `pivot-mining`, as the workers choose theirs. */
  task_queue: z.string().min(1).default(taskQueueFromEnv),
  paused: z.boolean().default(false),
  note: z.string().optional(),
});
export type NightlyScheduleSettings = z.input<typeof nightlyScheduleSchema>;
type ParsedSettings = z.infer<typeof nightlyScheduleSchema>;

/** Every run's workflow id starts with this; Temporal appends the scheduled time to make it unique. */
export function scheduledWorkflowId(scheduleId: string): string {
  return `${scheduleId}/nightly`;
}

export function nightlyScheduleOptions(settings: NightlyScheduleSettings): ScheduleOptions {
  const s = nightlyScheduleSchema.parse(settings);
  return {
    scheduleId: s.schedule_id,
    spec: { cronExpressions: [s.cron], timezone: s.time_zone, ...(s.jitter.ms > 0 ? { jitter: s.jitter.ms } : {}) },
    action: {
      type: 'startWorkflow',
      workflowType: NIGHTLY_WORKFLOW_TYPE,
      workflowId: scheduledWorkflowId(s.schedule_id),
      taskQueue: s.task_queue,
      args: [s.input],
    },
    policies: { overlap: OVERLAP_POLICIES[s.overlap].sdk, catchupWindow: s.catchup_window.ms },
    state: { paused: s.paused, ...(s.note !== undefined ? { note: s.note } : {}) },
  };
}

const shellQuote = (s: string) => (/^[A-Za-z0-9_./:@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The `temporal schedule create` command that creates the same schedule. */
export function temporalScheduleCreateCommand(settings: NightlyScheduleSettings): string {
  const s: ParsedSettings = nightlyScheduleSchema.parse(settings);
  const args = [
    ['--schedule-id', s.schedule_id],
    ['--cron', s.cron],
    ['--time-zone', s.time_zone],
    ['--overlap-policy', OVERLAP_POLICIES[s.overlap].cli],
    ['--catchup-window', s.catchup_window.text],
    ...(s.jitter.ms > 0 ? [['--jitter', s.jitter.text]] : []),
    ['--workflow-id', scheduledWorkflowId(s.schedule_id)],
    ['--task-queue', s.task_queue],
    ['--type', NIGHTLY_WORKFLOW_TYPE],
    ['--input', JSON.stringify(s.input)],
  ];
  return [
    'temporal schedule create',
    ...args.map(([flag, value]) => `${flag} ${shellQuote(value!)}`),
    ...(s.paused ? ['--paused'] : []),
  ].join(' \\\n  ');
}

export async function createNightlySchedule(client: Client, settings: NightlyScheduleSettings): Promise<string> {
  const handle = await client.schedule.create(nightlyScheduleOptions(settings));
  return handle.scheduleId;
}

export interface ScheduleSummaryLine {
  scheduleId: string;
  paused: boolean;
  workflowType: string | null;
  nextActionTimes: string[];
}

export async function listSchedules(client: Client): Promise<ScheduleSummaryLine[]> {
  const out: ScheduleSummaryLine[] = [];
  for await (const s of client.schedule.list()) {
    out.push({
      scheduleId: s.scheduleId,
      paused: s.state.paused,
      workflowType: s.action?.type === 'startWorkflow' ? s.action.workflowType : null,
      nextActionTimes: (s.info.nextActionTimes ?? []).map((d) => d.toISOString()),
    });
  }
  return out.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

export function describeSchedule(client: Client, scheduleId: string): Promise<ScheduleDescription> {
  return client.schedule.getHandle(scheduleId).describe();
}

/** Workflow ids of the schedule's runs so far (scheduled and triggered), oldest first. */
export async function scheduleRunIds(client: Client, scheduleId: string): Promise<string[]> {
  const description = await describeSchedule(client, scheduleId);
  return description.info.recentActions.map((a) => a.action.workflow.workflowId);
}

export async function pauseSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  await client.schedule.getHandle(scheduleId).pause(note);
}

export async function unpauseSchedule(client: Client, scheduleId: string, note?: string): Promise<void> {
  await client.schedule.getHandle(scheduleId).unpause(note);
}

/** Starts a run now; the schedule's overlap policy still applies (SKIP drops it while a run is going). */
export async function triggerSchedule(client: Client, scheduleId: string): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  const { policies } = await handle.describe();
  await handle.trigger(policies.overlap);
}

/** The runs a schedule has started and not dropped from its recent list, running or not. */
function startedRuns(description: ScheduleDescription): { workflowId: string; firstExecutionRunId: string }[] {
  return [...description.info.runningActions, ...description.info.recentActions.map((a) => a.action)].map(
    (a) => a.workflow,
  );
}

/**
 * Starts a run now and waits for its result: the run is the one that appears after the trigger. A
 * trigger the overlap policy drops (skip, while a run is still going) starts none, and this rejects
 * naming the run still going instead of waiting for a run that will not come.
 */
export async function triggerScheduleAndAwait(
  client: Client,
  scheduleId: string,
  { appearWithinMs = 30_000, intervalMs = 200 }: { appearWithinMs?: number; intervalMs?: number } = {},
): Promise<NightlyMiningResult> {
  const handle = client.schedule.getHandle(scheduleId);
  const before = await handle.describe();
  const earlier = new Set(startedRuns(before).map((run) => run.workflowId));
  await handle.trigger(before.policies.overlap);
  const deadline = Date.now() + appearWithinMs;
  while (Date.now() < deadline) {
    const run = startedRuns(await handle.describe()).find((r) => !earlier.has(r.workflowId));
    if (run)
      return client.workflow.getHandle<typeof nightlyMiningWorkflow>(run.workflowId, run.firstExecutionRunId).result();
    await sleep(intervalMs);
  }
  const going = before.info.runningActions.map((a) => a.workflow.workflowId);
  throw new Error(
    `schedule ${scheduleId}: the trigger started no run within ${appearWithinMs / 1000} s` +
      (going.length > 0 ? ` (overlap policy ${before.policies.overlap}; still going: ${going.join(', ')})` : ''),
  );
}

export async function deleteSchedule(client: Client, scheduleId: string): Promise<void> {
  await client.schedule.getHandle(scheduleId).delete();
}
