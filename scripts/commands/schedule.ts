import type { Client } from '@temporalio/client';
import { type Command, Option } from 'commander';
import {
  createNightlySchedule,
  deleteSchedule,
  describeSchedule,
  listSchedules,
  nightlyScheduleSchema,
  OVERLAP_POLICIES,
  pauseSchedule,
  temporalScheduleCreateCommand,
  triggerSchedule,
  triggerScheduleAndAwait,
  unpauseSchedule,
  type NightlyScheduleSettings,
} from '../../client/schedules';
import { DEFAULT_TASK_QUEUE } from '../../contracts/temporal';
import { TASK_QUEUE } from '../../workers/connection';
import { connectClient } from '../../client';

// `pivot-miner schedule ...`: nightly incremental mining as a Temporal Schedule.

interface CreateFlags {
  config: string;
  cron: string;
  timeZone: string;
  overlap: string;
  catchupWindow: string;
  jitter: string;
  taskQueue: string;
  seed?: string;
  paused?: boolean;
  note?: string;
  printCommand?: boolean;
}

/** CLI flags → validated schedule settings; errors name the flag to fix. */
export function scheduleSettingsFromFlags(scheduleId: string, flags: CreateFlags): NightlyScheduleSettings {
  const settings = {
    schedule_id: scheduleId,
    input: { config_path: flags.config, ...(flags.seed !== undefined ? { seed: Number(flags.seed) } : {}) },
    cron: flags.cron,
    time_zone: flags.timeZone,
    overlap: flags.overlap.replace(/-/g, '_').toLowerCase(),
    catchup_window: flags.catchupWindow,
    jitter: flags.jitter,
    task_queue: flags.taskQueue,
    paused: flags.paused ?? false,
    ...(flags.note !== undefined ? { note: flags.note } : {}),
  };
  const parsed = nightlyScheduleSchema.safeParse(settings);
  if (!parsed.success) {
    const flagOf: Record<string, string> = {
      input: '--config/--seed',
      time_zone: '--time-zone',
      catchup_window: '--catchup-window',
      task_queue: '--task-queue',
    };
    throw new Error(
      parsed.error.issues
        .map(
          (i) =>
            `schedule create: ${flagOf[String(i.path[0])] ?? `--${String(i.path[0] ?? 'schedule-id').replace(/_/g, '-')}`}: ${i.message}`,
        )
        .join('\n'),
    );
  }
  return settings as NightlyScheduleSettings;
}

async function withClient(fn: (client: Client) => Promise<void>): Promise<void> {
  const { client, close } = await connectClient();
  try {
    await fn(client);
  } finally {
    await close();
  }
}

export function registerScheduleCommand(program: Command): void {
  const schedule = program.command('schedule').description('nightly incremental mining on a Temporal Schedule');

  schedule
    .command('create')
    .description('create a schedule that runs nightlyMiningWorkflow over the config pool.sources')
    .argument('<schedule-id>')
    .requiredOption(
      '-c, --config <path>',
      'pipeline config with a pool block (relative to the worker working directory)',
    )
    .option('--cron <expr>', 'cron spec', '0 2 * * *')
    .option('--time-zone <tz>', 'IANA time zone the cron spec is read in', 'UTC')
    .option(
      '--overlap <policy>',
      `what to do when a run is still going: ${Object.keys(OVERLAP_POLICIES).join('|')}`,
      'skip',
    )
    .option('--catchup-window <duration>', 'how late a missed run may still start (Go duration)', '1h')
    .option('--jitter <duration>', 'random delay added to each run (Go duration)', '0s')
    .addOption(
      new Option('--task-queue <name>', 'task queue of the pivot-miner workers').default(
        TASK_QUEUE,
        `PIVOT_MINER_TASK_QUEUE, else ${DEFAULT_TASK_QUEUE}`,
      ),
    )
    .option('--seed <n>', 'overrides the config seed')
    .option('--paused', 'create it paused')
    .option('--note <text>', 'note shown with the schedule state')
    .option('--print-command', 'only print the equivalent `temporal schedule create` command')
    .action(async (scheduleId: string, flags: CreateFlags) => {
      const settings = scheduleSettingsFromFlags(scheduleId, flags);
      if (flags.printCommand) {
        console.log(temporalScheduleCreateCommand(settings));
        return;
      }
      await withClient(async (client) => {
        await createNightlySchedule(client, settings);
        console.log(`created schedule ${scheduleId}`);
      });
    });

  schedule
    .command('describe')
    .argument('<schedule-id>')
    .description('show spec, policies, state, recent and next runs')
    .action((scheduleId: string) =>
      withClient(async (client) => {
        const d = await describeSchedule(client, scheduleId);
        console.log(
          JSON.stringify(
            {
              scheduleId: d.scheduleId,
              spec: d.spec,
              policies: d.policies,
              state: d.state,
              action:
                d.action.type === 'startWorkflow'
                  ? {
                      workflowType: d.action.workflowType,
                      workflowId: d.action.workflowId,
                      taskQueue: d.action.taskQueue,
                      args: d.action.args,
                    }
                  : d.action,
              recentRuns: d.info.recentActions.map((a) => ({
                scheduledAt: a.scheduledAt.toISOString(),
                workflowId: a.action.workflow.workflowId,
              })),
              runningWorkflows: d.info.runningActions.map((a) => a.workflow.workflowId),
              nextActionTimes: d.info.nextActionTimes.map((t) => t.toISOString()),
            },
            null,
            2,
          ),
        );
      }),
    );

  schedule
    .command('list')
    .description('list schedules in the namespace')
    .action(() =>
      withClient(async (client) => {
        const all = await listSchedules(client);
        if (all.length === 0) console.log('no schedules');
        for (const s of all)
          console.log(
            `${s.scheduleId}\t${s.paused ? 'paused' : 'active'}\t${s.workflowType ?? '-'}\tnext: ${s.nextActionTimes[0] ?? '-'}`,
          );
      }),
    );

  schedule
    .command('pause')
    .description('pause the schedule: no run starts until it is unpaused')
    .argument('<schedule-id>')
    .option('--note <text>', 'why it is paused')
    .action((scheduleId: string, flags: { note?: string }) =>
      withClient(async (client) => {
        await pauseSchedule(client, scheduleId, flags.note);
        console.log(`paused ${scheduleId}`);
      }),
    );

  schedule
    .command('unpause')
    .description('resume a paused schedule')
    .argument('<schedule-id>')
    .option('--note <text>', 'why it is resumed')
    .action((scheduleId: string, flags: { note?: string }) =>
      withClient(async (client) => {
        await unpauseSchedule(client, scheduleId, flags.note);
        console.log(`unpaused ${scheduleId}`);
      }),
    );

  schedule
    .command('trigger')
    .argument('<schedule-id>')
    .description('start a run now (the overlap policy still applies)')
    .option('--wait', 'wait for the run it starts and print its result (status, version, pivots path) as JSON')
    .action((scheduleId: string, flags: { wait?: boolean }) =>
      withClient(async (client) => {
        if (flags.wait) {
          console.log(JSON.stringify(await triggerScheduleAndAwait(client, scheduleId), null, 2));
          return;
        }
        await triggerSchedule(client, scheduleId);
        console.log(`triggered ${scheduleId}`);
      }),
    );

  schedule
    .command('delete')
    .argument('<schedule-id>')
    .description('delete the schedule (its runs and pool versions stay)')
    .action((scheduleId: string) =>
      withClient(async (client) => {
        await deleteSchedule(client, scheduleId);
        console.log(`deleted ${scheduleId}`);
      }),
    );
}
