import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { ensureDevServer } from '../lib/devServer';
import { freePort } from '../lib/net';
import { forEachRun } from './history';
import { histogramTotals, meanBetween, stepBreakdown, type HistogramTotals } from './stepBreakdown';
import { runRecord } from './timeline';

// Where a hand-off of a durable stage goes, away from any stage work: a workflow awaiting one
// no-op activity after another, on the dev server as `pivot-miner dev` and the bench start it, with
// an in-process worker. Prints a step's cost from the server's event times and the SDK's request
// metrics (which tell the server's share of a workflow task from the worker's), then one JSON line.
// --dynamic-config=KEY=VALUE (repeatable) tries a server setting, e.g.
// history.transferProcessorMaxPollRPS=1000 (Temporal reads each history shard's transfer queue at
// most 20 times a second by default, and a dev server has one shard).
// Run: npx tsx scripts/bench/workflowSteps.ts [--steps=8] [--runs=12] [--dynamic-config=KEY=VALUE ...]

const { values: flags } = parseArgs({
  options: {
    steps: { type: 'string', default: '8' },
    runs: { type: 'string', default: '12' },
    'dynamic-config': { type: 'string', multiple: true, default: [] },
  },
});
const steps = Number(flags.steps);
const runs = Number(flags.runs);
/** Uncounted first runs: the worker bundles and V8 compiles on them. */
const WARMUP_RUNS = 2;
const TASK_QUEUE = 'workflow-steps';

/** The SDK's histograms this reads, by what they measure. */
const SDK_SERIES = {
  workflowTaskInWorker: ['temporal_workflow_task_execution_latency', {}],
  respondWorkflowTaskCompleted: ['temporal_request_latency', { operation: 'RespondWorkflowTaskCompleted' }],
  respondActivityTaskCompleted: ['temporal_request_latency', { operation: 'RespondActivityTaskCompleted' }],
} as const;
type SdkSeries = keyof typeof SDK_SERIES;

async function scrapeSdk(address: string): Promise<Record<SdkSeries, HistogramTotals>> {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  const totals = (name: SdkSeries) => histogramTotals(text, SDK_SERIES[name][0], SDK_SERIES[name][1]);
  return { workflowTaskInWorker: totals('workflowTaskInWorker'), respondWorkflowTaskCompleted: totals('respondWorkflowTaskCompleted'), respondActivityTaskCompleted: totals('respondActivityTaskCompleted') };
}

async function main(): Promise<void> {
  if (!Number.isInteger(steps) || steps < 1 || !Number.isInteger(runs) || runs < 1) throw new Error('--steps and --runs take whole numbers of at least 1');
  const metricsAddress = `127.0.0.1:${await freePort()}`;
  // Before any connection: the SDK's runtime is created once, by the first one.
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress } } } });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-workflow-steps-'));
  const server = await ensureDevServer({ port: await freePort(), uiPort: await freePort(), stateDir: dir, dynamicConfig: flags['dynamic-config'] });
  const native = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  try {
    const worker = await Worker.create({
      connection: native,
      taskQueue: TASK_QUEUE,
      workflowsPath: require.resolve('./workflowStepsWorkflow'),
      activities: { noop: async (step: number) => step },
    });
    const client = new Client({ connection });
    const runOnce = async (run: number) => {
      const handle = await client.workflow.start('workflowStepsWorkflow', { taskQueue: TASK_QUEUE, workflowId: `steps-${run}`, args: [steps] });
      if ((await handle.result()) !== steps) throw new Error(`run ${run} did not await ${steps} activities`);
      const [record] = await forEachRun(client, handle.workflowId, handle.firstExecutionRunId, runRecord);
      if (!record) throw new Error(`run ${run} has no history`);
      return record;
    };
    const { records, before, after } = await worker.runUntil(async () => {
      for (let run = 0; run < WARMUP_RUNS; run++) await runOnce(run);
      const before = await scrapeSdk(metricsAddress);
      const records = [];
      for (let run = WARMUP_RUNS; run < WARMUP_RUNS + runs; run++) records.push(await runOnce(run));
      return { records, before, after: await scrapeSdk(metricsAddress) };
    });
    const breakdown = stepBreakdown(records);
    const sdk = {
      workflowTaskInWorker: meanBetween(before.workflowTaskInWorker, after.workflowTaskInWorker),
      respondWorkflowTaskCompleted: meanBetween(before.respondWorkflowTaskCompleted, after.respondWorkflowTaskCompleted),
      respondActivityTaskCompleted: meanBetween(before.respondActivityTaskCompleted, after.respondActivityTaskCompleted),
    };
    const ms = (x: number | undefined) => (x === undefined ? 'n/a' : `${x.toFixed(1)} ms`);
    const settings = flags['dynamic-config'].length > 0 ? flags['dynamic-config'].join(', ') : 'none beyond the dev server defaults';
    console.log(`a workflow awaiting ${steps} no-op activities one at a time, ${runs} runs (after ${WARMUP_RUNS} uncounted); dynamic config: ${settings}`);
    const rows: [string, number | undefined][] = [
      [`one step (workflow start -> completed, over ${steps})`, breakdown.stepMs],
      ['workflow task: scheduled -> taken by the worker', breakdown.workflowTaskDispatchMs],
      ['workflow task: taken -> completed', breakdown.workflowTaskOnWorkerMs],
      ['  of which in the worker (SDK: workflow_task_execution)', sdk.workflowTaskInWorker],
      ["  of which the server's RespondWorkflowTaskCompleted", sdk.respondWorkflowTaskCompleted],
      ['activity: scheduled -> started', breakdown.activityDispatchMs],
      ['activity: started -> completed (it does nothing)', breakdown.activityRunMs],
      ["  of which the server's RespondActivityTaskCompleted", sdk.respondActivityTaskCompleted],
    ];
    for (const [label, value] of rows) console.log(`  ${label.padEnd(58)}${ms(value)}`);
    const round = (x: number | undefined) => (x === undefined ? null : Number(x.toFixed(2)));
    console.log(JSON.stringify({
      bench: 'workflow_steps',
      steps,
      runs,
      dynamic_config: flags['dynamic-config'],
      step_ms: round(breakdown.stepMs),
      workflow_task_dispatch_ms: round(breakdown.workflowTaskDispatchMs),
      workflow_task_on_worker_ms: round(breakdown.workflowTaskOnWorkerMs),
      workflow_task_in_worker_ms: round(sdk.workflowTaskInWorker),
      respond_workflow_task_completed_ms: round(sdk.respondWorkflowTaskCompleted),
      activity_dispatch_ms: round(breakdown.activityDispatchMs),
      activity_run_ms: round(breakdown.activityRunMs),
      respond_activity_task_completed_ms: round(sdk.respondActivityTaskCompleted),
    }));
  } finally {
    await connection.close();
    await native.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
