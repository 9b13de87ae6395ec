import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chunksFinishedSignal, runCandidatesSignal } from '../../contracts/temporal';
import type { PrefetchResult } from '../../contracts/payloads';
import { calls, earlyProfilingWorkerForFile, planOf, TASK_QUEUE, until } from './earlyProfilingSetup';

// Early profiling (prefetchLocalProfileWorkflow) continuing as new while collect and the run signal
// it: nothing either sent is lost. It runs on a real dev server against the stand-in activities and
// chunked stage of earlyProfilingSetup.ts; what the run does with early profiling's outcomes is
// earlyProfiling.test.ts.

const worker = earlyProfilingWorkerForFile();

/**
 * The signals early profiling gets from collect (`final`) and from the run (`candidates`), in order;
 * `continued`: wait until it has continued as new.
 */
type Signals = Array<'final' | 'candidates' | 'continued'>;

/**
 * Early profiling with a history limit so low that it continues as new once the segment it started
 * ends; `signals` arrive while that segment runs.
 */
async function continuedEarlyProfiling(runId: string, signals: Signals): Promise<void> {
  const plan = planOf(runId);
  const workflowId = `early-${runId}/prefetch`;
  const handle = await worker.env.client.workflow.start('prefetchLocalProfileWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: [{ plan, collectPrefix: `${plan.runDir}/rollouts`, alignForRun: true, continueAsNewAfterEvents: 10 }],
  });
  await handle.signal(chunksFinishedSignal, { chunks: 1, final: false });
  const segmentRuns = () =>
    worker.env.client.workflow
      .getHandle(`${workflowId}/rows-0-2`)
      .describe()
      .then(
        () => true,
        () => false,
      );
  await until('the first segment runs', segmentRuns);
  const candidatesPath = `${plan.runDir}/candidates.jsonl`;
  for (const signal of signals) {
    if (signal === 'final') await handle.signal(chunksFinishedSignal, { chunks: 2, final: true });
    else if (signal === 'candidates') await handle.signal(runCandidatesSignal, { candidatesPath, outPrefix: 'x' });
    else await until('continued as new', async () => (await handle.describe()).runId !== handle.firstExecutionRunId);
  }
  const result = await Promise.race([
    handle.result() as Promise<PrefetchResult>,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('early profiling hung')), 30_000)),
  ]);
  const { runId: lastRun, ...described } = await handle.describe();
  assert.notEqual(lastRun, handle.firstExecutionRunId, `continued as new: ${JSON.stringify(described.status)}`);
  assert.ok(result.aligned, 'the samples were filed for the run');
  const filings = (calls.get(runId) ?? []).filter(([name]) => name === 'alignPrefetched');
  assert.deepEqual(filings, [['alignPrefetched', candidatesPath]]);
}

// The history is past its limit while the first segment runs, so the loop waits for it to end and
// then continues as new: whatever collect and the run sent meanwhile, in either order, still counts.
test('the run’s candidates survive a continue-as-new of early profiling while a segment runs', () =>
  continuedEarlyProfiling('continued', ['final', 'candidates']));

test('the run’s candidates sent before collect’s last chunks survive a continue-as-new', () =>
  continuedEarlyProfiling('continued-candidates-first', ['candidates', 'final']));

test('the run’s candidates sent after a continue-as-new are taken', () =>
  continuedEarlyProfiling('continued-candidates-after', ['final', 'continued', 'candidates']));
