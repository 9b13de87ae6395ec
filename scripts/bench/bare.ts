import { open } from 'node:fs/promises';
import { Agent, request } from 'undici';
import { askAgent } from '../../activities/stage/aggregateMetrics';
import { materializedInputsPath } from '../../activities/chunk/chunkIndex';
import { keyedResult } from '../../activities/chunk/executors/types';
import { profiledResultOfDigest } from '../../activities/stage/profile';
import { aggregateMetricsPath, rolloutDigest } from '../../gym/aggregateMetrics';
import { legacyEnvironmentServerName } from '../../gym/environmentServers';
import { AggregateMetricsWriter } from '../../gym/aggregateMetricsFile';
import { JsonlWriter, readJsonl } from '../../gym/jsonl';
import { parseKinded, type JsonDict } from '../../gym/kindedJson';
import { materializeRecords } from '../../gym/materialize';
import type { MaterializedRow } from '../../gym/schemas';
import { writeRewardProfileOf, type ProfiledInput } from '../../gym/rewardProfile';

// The yardstick for orchestration overhead: the files a durable collect stage leaves (materialized
// inputs, rollouts, aggregate metrics, reward profile), made as a script without Temporal would make
// them. The same materialization, agent POST /run calls and JSONL writes at the same concurrency,
// each result read with its number kinds and keyed as NeMo Gym keys it, so every file has the
// stage's bytes (test/scripts/bench/inProcessStage.test.ts). Each rollout's digest (its
// `/aggregate_metrics` entry, a few hundred bytes) stays in memory, as ng_collect_rollouts keeps its
// results; then, as the durable finish does, one POST /aggregate_metrics beside the reward profile,
// both from those digests. No Temporal, chunks, shards, retries or merge. The tail is timed apart,
// so the bench can still set the durable stage beside the rollouts alone.

export interface BareCollectOptions {
  tasksPath: string;
  agentUrl: string;
  agentName: string;
  numRepeats: number;
  concurrency: number;
  outPath: string;
}

export interface BareCollectResult {
  rows: number;
  seconds: number;
  /** Of `seconds`, the aggregate metrics and reward profile after the last rollout. */
  tailSeconds: number;
}

interface Digest {
  task: number;
  rollout: number;
  text: string;
}

const secondsSince = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

export async function runBareCollect(opts: BareCollectOptions): Promise<BareCollectResult> {
  const started = process.hrtime.bigint();
  const url = new URL('/run', opts.agentUrl).toString();
  const dispatcher = new Agent({ connections: opts.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const outPrefix = opts.outPath.replace(/\.jsonl$/, '');
  const out = await JsonlWriter.open(opts.outPath);
  const inputsOut = await JsonlWriter.open(materializedInputsPath(outPrefix));
  const inputs: ProfiledInput[] = [];
  const digests: Digest[] = [];
  // Async generators queue concurrent next() calls, so the lanes share one ordered row stream and
  // the materialized inputs file is written in key order, each line where its row index says.
  async function* materializedRows(): AsyncGenerator<{ row: MaterializedRow; value: JsonDict; text: string }> {
    const options = {
      agent_name: opts.agentName,
      num_repeats: opts.numRepeats,
      seed_per_repeat: true,
      responses_create_params: {},
    };
    for await (const { row, value, text } of materializeRecords(readJsonl(opts.tasksPath), options, opts.tasksPath)) {
      const byteOffset = inputsOut.bytesWritten;
      await inputsOut.writeLine(`${text}\n`);
      inputs.push({
        task: row._ng_task_index,
        rollout: row._ng_rollout_index,
        agentName: row.agent_ref.name,
        byteOffset,
        byteLength: inputsOut.bytesWritten - byteOffset,
      });
      yield { row, value, text };
    }
  }
  const iterator = materializedRows();
  const lane = async (): Promise<void> => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const input = next.value;
      const { row } = input;
      const res = await request(url, {
        method: 'POST',
        // The materialized line, as NeMo Gym posts `orjson.dumps(row)`.
        body: input.text,
        headers: { 'content-type': 'application/json' },
        dispatcher,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 200)}`);
      const result = keyedResult(input, parseKinded(text).kinded as JsonDict);
      await out.write(result);
      const digest = rolloutDigest(result);
      if (digest === null)
        throw new Error(`${url} answered a rollout without a response object for task ${row._ng_task_index}`);
      digests.push({ task: row._ng_task_index, rollout: row._ng_rollout_index, text: digest });
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, lane));
  } finally {
    await out.close();
    await inputsOut.close();
    await dispatcher.close();
  }

  const tailStarted = process.hrtime.bigint();
  // Rollouts complete in any order; both readers take them in key order, as upstream sorts them.
  digests.sort((a, b) => a.task - b.task || a.rollout - b.rollout);
  await Promise.all([
    writeAggregateMetricsOf(opts, digests),
    writeRewardProfileOf(
      {
        results: async function* () {
          for (const digest of digests) yield profiledResultOfDigest(digest.text);
        },
        inputs: async function* () {
          yield* inputs;
        },
      },
      {
        materializedInputsPath: materializedInputsPath(outPrefix),
        rolloutsPath: opts.outPath,
        allowPartialRollouts: false,
        canonicalInputs: true,
      },
    ),
  ]);
  return { rows: digests.length, seconds: secondsSince(started), tailSeconds: secondsSince(tailStarted) };
}

/** `<stem>_aggregate_metrics.json` from the one agent every row names, as 0.7.0's ng_collect_rollouts writes it. */
async function writeAggregateMetricsOf(opts: BareCollectOptions, digests: readonly Digest[]): Promise<void> {
  const values = await askAgent(
    opts.agentName,
    opts.agentUrl,
    async function* () {
      for (const digest of digests) yield digest.text;
    },
    60_000,
    legacyEnvironmentServerName(opts.agentName),
  );
  const out = aggregateMetricsPath(opts.outPath);
  const file = await open(out, 'w');
  try {
    const writer = new AggregateMetricsWriter(file, out);
    await writer.entry(opts.agentName, values);
    await writer.close();
  } finally {
    await file.close();
  }
}
