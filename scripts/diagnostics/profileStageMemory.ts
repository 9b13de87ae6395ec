import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { profileWithAggregateMetrics } from '../../activities/stage/finishStage';
import { claimStageFence } from '../../activities/chunk/fence';
import type { ProfileResult } from '../../contracts/payloads';
import { materializedInputsPath, mergedPaths, writeChunkIndex } from '../../activities/chunk/chunkIndex';
import { RowIndexWriter } from '../../activities/stage/rowIndex';
import { workerHeapArgs, workerProcessEnv } from '../../bin/workerHeap';
import { rolloutDigest } from '../../gym/aggregateMetrics';
import type { JsonDict } from '../../gym/kindedJson';
import { loadNow, NUM_SAMPLES } from '../bench/benchContext';
import { benchPlan } from '../bench/collect';
import { parseFlags, wholeNumber } from '../bench/flags';
import { DEMO_TASKS } from '../bench/inputs';

// Peak RSS of a local-profile stage's tail, the reward profile and the aggregate metrics as the worker
// runs them after the last merge (finishStage's profileWithAggregateMetrics: overlapped on small stages,
// one after the other on large ones), over N synthetic rollouts shaped like
// the scale bench's (demo-task prompts, a simulated response with its tools and usage, ~5 KB a line),
// with the row index and digests the stage reads them through. Each N
// runs in a fresh process, so its peak is its own, and every figure is printed beside the first N's.
//
//   npx tsx scripts/diagnostics/profileStageMemory.ts [--rows=10000,1000000] [--dir=/tmp/x]
//
// Generated files are kept in --dir and reused by the next run with the same N.

const MB = 1024 * 1024;
const WRITE_PIECE_CHARS = 1 << 20;

interface ChildFigures {
  maxRssBytes: number;
  peakHeapUsedBytes: number;
  peakArrayBuffersBytes: number;
  seconds: number;
  tasks: number;
}

const flags = parseFlags('npx tsx scripts/diagnostics/profileStageMemory.ts [--rows=10000,1000000] [--dir=/tmp/x]', {
  rows: { type: 'string' },
  dir: { type: 'string' },
  child: { type: 'string' },
});

/** A demo task's request, a reasoning item and a tool call, as the policy simulator answers. */
function templates(): { input: string; rollout: string }[] {
  const rows = readFileSync(DEMO_TASKS, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return rows.map((row, t) => {
    const params = row.responses_create_params as { tools?: unknown[] };
    const head = {
      responses_create_params: params,
      agent_ref: { type: 'responses_api_agents', name: 'bench_pivot_agent' },
      _ng_task_index: '@TASK@',
      _ng_rollout_index: '@ROLLOUT@',
      expected_action: {
        type: 'function_call',
        name: 'find_city_by_landmark',
        arguments: '{"landmark":"Eiffel Tower"}',
      },
      provenance: {
        source_file: 'rollouts.jsonl',
        source_line: t,
        source_format: 'gym_rollouts',
        task_index: t,
        rollout_index: 1,
        source_reward: 1,
        pivot_index: 0,
        depth: 0,
        trajectory_length: 4,
        uuid: 'fec793e6-3000-5b2b-82d4-60100a4c2730',
      },
      bench_id: '@BENCH@',
    };
    const response = {
      id: 'resp_20aa821ee7b8fb9ba7e239e7',
      object: 'response',
      created_at: 1767225600,
      status: 'completed',
      error: null,
      incomplete_details: null,
      model: 'pivot-miner-simulated-policy',
      output: [
        {
          type: 'reasoning',
          id: 'rs_b7f2a47cbeff4349a3c37585',
          summary: [
            { type: 'summary_text', text: 'Next I need find_city_by_landmark with {"landmark":"Eiffel Tower"}.' },
          ],
          status: 'completed',
        },
        {
          type: 'function_call',
          id: 'fc_8640382c9b7ec8b61f4058ef',
          call_id: 'call_4fcb71aac02bb4bfb0bac86d',
          name: 'find_city_by_landmark',
          arguments: '{"landmark":"Eiffel Tower"}',
          status: 'completed',
        },
      ],
      parallel_tool_calls: false,
      tool_choice: 'auto',
      tools: params.tools ?? [],
      usage: {
        input_tokens: '@IN@',
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: '@OUT@',
        output_tokens_details: { reasoning_tokens: 17 },
        total_tokens: '@TOTAL@',
      },
      metadata: { simulator: 'pivot-miner seeded policy simulator' },
    };
    const input = JSON.stringify(head);
    const rollout = JSON.stringify({ ...head, response, reward: '@REWARD@', category: 'EXPECTED_TOOL_CALL' });
    return { input, rollout };
  });
}

function fill(template: string, values: Record<string, number>): string {
  return template.replace(/"@([A-Z]+)@"/g, (_, k: string) => String(values[k]));
}

async function put(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
}

/**
 * The merged rollouts and their materialized inputs, one line each per (task, sample), in key order,
 * with what materialize and the merge write beside them: the row index and the digests.
 */
async function generate(outPrefix: string, rows: number): Promise<void> {
  const shapes = templates();
  mkdirSync(path.dirname(mergedPaths(outPrefix).digestsPath), { recursive: true });
  const inputs = createWriteStream(materializedInputsPath(outPrefix));
  const rollouts = createWriteStream(`${outPrefix}.jsonl`);
  const digests = createWriteStream(mergedPaths(outPrefix).digestsPath);
  const index = await RowIndexWriter.create(outPrefix);
  let inputBytes = 0;
  let inputText = '';
  let rolloutText = '';
  let digestText = '';
  for (let i = 0; i < rows; i++) {
    const task = Math.floor(i / NUM_SAMPLES);
    const shape = shapes[task % shapes.length]!;
    const tokensIn = 60 + (task % 50);
    const tokensOut = 40 + ((i * 7) % 90);
    const values = {
      TASK: task,
      ROLLOUT: i % NUM_SAMPLES,
      BENCH: task,
      IN: tokensIn,
      OUT: tokensOut,
      TOTAL: tokensIn + tokensOut,
      REWARD: (i * 2654435761) % 3 === 0 ? 0 : 1,
    };
    const input = `${fill(shape.input, values)}\n`;
    const rollout = fill(shape.rollout, values);
    const byteLength = Buffer.byteLength(input);
    await index.add({
      task,
      rollout: values.ROLLOUT,
      agentName: 'bench_pivot_agent',
      byteOffset: inputBytes,
      byteLength,
    });
    inputBytes += byteLength;
    inputText += input;
    rolloutText += `${rollout}\n`;
    digestText += `${rolloutDigest(JSON.parse(rollout) as JsonDict)}\n`;
    if (rolloutText.length >= WRITE_PIECE_CHARS || i === rows - 1) {
      await Promise.all([put(inputs, inputText), put(rollouts, rolloutText), put(digests, digestText)]);
      inputText = '';
      rolloutText = '';
      digestText = '';
    }
  }
  await Promise.all([inputs, rollouts, digests].map((s) => new Promise<void>((resolve) => s.end(() => resolve()))));
  const names = await index.close();
  await writeChunkIndex(outPrefix, [0, inputBytes], {
    rows,
    tasks: Math.ceil(rows / NUM_SAMPLES),
    chunks: 1,
    chunkSize: rows,
    ...names,
  });
}

/** The child: the tail as finishStage runs it for a stage of this size, with the process's peaks. */
async function measure(outPrefix: string): Promise<ChildFigures> {
  const rows = Number(readFileSync(path.join(path.dirname(outPrefix), 'generated'), 'utf8'));
  const plan = benchPlan({
    runDir: path.dirname(outPrefix),
    baseDir: path.dirname(outPrefix),
    agentUrl: 'http://127.0.0.1:9',
    modelUrl: 'http://127.0.0.1:9',
    agentName: 'bench_pivot_agent',
    numRepeats: 1,
    numSamples: NUM_SAMPLES,
    chunkSize: 1000,
    maxChunksInFlight: 1,
    maxConcurrency: 1,
  });
  let peakHeapUsedBytes = 0;
  let peakArrayBuffersBytes = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeapUsedBytes = Math.max(peakHeapUsedBytes, m.heapUsed);
    peakArrayBuffersBytes = Math.max(peakArrayBuffersBytes, m.arrayBuffers);
  }, 100);
  const started = performance.now();
  const tail = {
    plan,
    stage: 'local_profile' as const,
    outPrefix,
    rolloutsPath: `${outPrefix}.jsonl`,
    completed: rows,
    allowPartialRollouts: false,
    fence: await claimStageFence(outPrefix),
  };
  const profile = await new MockActivityEnvironment().run<
    [typeof tail],
    ProfileResult,
    typeof profileWithAggregateMetrics
  >(profileWithAggregateMetrics, tail);
  clearInterval(sampler);
  return {
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    peakHeapUsedBytes,
    peakArrayBuffersBytes,
    seconds: (performance.now() - started) / 1000,
    tasks: profile.tasks,
  };
}

function runChild(outPrefix: string): Promise<ChildFigures> {
  // With the worker's heap flag, as the tail runs in a worker.
  const child = spawn(
    process.execPath,
    [...workerHeapArgs(), ...process.execArgv, __filename, `--child=${outPrefix}`],
    { stdio: ['ignore', 'pipe', 'inherit'], env: workerProcessEnv() },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').at(-1)!) as ChildFigures);
      else reject(new Error(`measuring ${outPrefix} exited with ${signal ?? code}`));
    });
  });
}

async function main(): Promise<void> {
  const child = flags.child;
  if (child) {
    console.log(JSON.stringify(await measure(child)));
    return;
  }
  const counts = (flags.rows ?? '10000,1000000').split(',').map((n) => wholeNumber('rows', n)!);
  const dir = flags.dir ?? path.join(tmpdir(), 'pivot-profile-stage-memory');
  let anchor: ChildFigures | undefined;
  for (const rows of counts) {
    const runDir = path.join(dir, `rows_${rows}`);
    const outPrefix = path.join(runDir, 'local_profile');
    const ready = path.join(runDir, 'generated');
    if (!existsSync(ready)) {
      mkdirSync(runDir, { recursive: true });
      await generate(outPrefix, rows);
      writeFileSync(ready, `${rows}\n`);
    }
    const load = loadNow();
    const figures = await runChild(outPrefix);
    anchor ??= figures;
    const mb = (b: number) => `${Math.round(b / MB)} MB`;
    console.log(
      `${rows} rollouts: peak RSS ${mb(figures.maxRssBytes)} (x${(figures.maxRssBytes / anchor.maxRssBytes).toFixed(2)} of ${counts[0]}), ` +
        `heap ${mb(figures.peakHeapUsedBytes)}, array buffers ${mb(figures.peakArrayBuffersBytes)}, ${figures.seconds.toFixed(0)} s, ${figures.tasks} tasks, load ${load}`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
