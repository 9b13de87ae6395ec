import type { Command } from 'commander';
import {
  awaitCurriculumStart,
  connectClient,
  getCurriculumRounds,
  startPivotCurriculum,
  submitPolicyCheckpoint,
} from '../../client';
import { TASK_QUEUE } from '../../workers/connection';

// The pivot curriculum from a shell: start it once per training run, then hand it each checkpoint
// the trainer saves. A training platform does the same through client/ (startPivotCurriculum,
// submitPolicyCheckpoint).

const integer = (v: string) => Number.parseInt(v, 10);

export function registerCurriculumCommand(program: Command): void {
  const curriculum = program
    .command('curriculum')
    .description('pivotCurriculumWorkflow: a pool re-profiled with each new policy checkpoint during training');

  curriculum
    .command('start')
    .description(
      'start the curriculum for a config with a pool block and wait until its starting pool is fixed; it runs until cancelled',
    )
    .requiredOption('-c, --config <file>', 'pipeline config YAML, relative to the worker working directory')
    .requiredOption('--workflow-id <id>', 'its workflow id, which checkpoints are sent to')
    .option('--initial-pool <file>', "pivots.jsonl to start from (default: the latest version of the config's pool)")
    .option(
      '--top-up-to <n>',
      'before each round, refill the pool from the latest nightly version up to n pivots',
      integer,
    )
    .option('--seed <n>', 'override the config seed', integer)
    .action(
      async (opts: { config: string; workflowId: string; initialPool?: string; topUpTo?: number; seed?: number }) => {
        const input = {
          config_path: opts.config,
          initial_pool: opts.initialPool,
          top_up_to: opts.topUpTo,
          seed: opts.seed,
        };
        const { client, close } = await connectClient();
        try {
          const workflowId = await startPivotCurriculum(client, input, {
            workflowId: opts.workflowId,
            taskQueue: TASK_QUEUE,
          });
          const pool = await awaitCurriculumStart(client, workflowId);
          console.error(`curriculum ${workflowId} starts from ${pool}`);
          console.log(workflowId);
        } finally {
          await close();
        }
      },
    );

  curriculum
    .command('checkpoint')
    .description('hand a policy checkpoint to a running curriculum and wait for the round it triggers')
    .argument('<workflow-id>')
    .requiredOption('--model <name>', 'model name sent to the policy endpoint')
    .option(
      '--endpoint <url...>',
      'base URL of the checkpoint server, or its replicas (default: local_profile.model.url)',
    )
    .option('--training-step <n>', 'trainer step, recorded in the rounds history', integer)
    .action(async (workflowId: string, opts: { model: string; endpoint?: string; trainingStep?: number }) => {
      const checkpoint = { model: opts.model, endpoint: opts.endpoint, training_step: opts.trainingStep };
      const { client, close } = await connectClient();
      try {
        console.log(JSON.stringify(await submitPolicyCheckpoint(client, workflowId, checkpoint), null, 2));
      } finally {
        await close();
      }
    });

  curriculum
    .command('rounds')
    .description('the rounds a curriculum has run: pool size, kept, retired, pivots path')
    .argument('<workflow-id>')
    .action(async (workflowId: string) => {
      const { client, close } = await connectClient();
      try {
        console.log(JSON.stringify(await getCurriculumRounds(client, workflowId), null, 2));
      } finally {
        await close();
      }
    });
}
