import { Agent, request } from 'undici';
import { JsonlWriter, readJsonl } from '../../gym/jsonl';
import { materializeRows } from '../../gym/materialize';
import type { MaterializedRow } from '../../gym/schemas';

// The yardstick for orchestration overhead: the same materialization, the same agent POST /run
// calls and the same JSONL writes as the durable collect stage, at the same concurrency, with no
// Temporal, no chunks, no shards, no retries and no merge.

export interface BareCollectOptions {
  tasksPath: string;
  agentUrl: string;
  agentName: string;
  numRepeats: number;
  concurrency: number;
  outPath: string;
}

export async function runBareCollect(opts: BareCollectOptions): Promise<{ rows: number; seconds: number }> {
  const started = process.hrtime.bigint();
  const url = new URL('/run', opts.agentUrl).toString();
  const dispatcher = new Agent({ connections: opts.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
  const out = await JsonlWriter.open(opts.outPath);
  const rows = materializeRows(
    readJsonl(opts.tasksPath),
    { agent_name: opts.agentName, num_repeats: opts.numRepeats, seed_per_repeat: true, responses_create_params: {} },
    opts.tasksPath,
  );
  const iterator = rows[Symbol.asyncIterator]();
  // Async generators queue concurrent next() calls, so the lanes share one ordered row stream.
  let count = 0;
  const lane = async (): Promise<void> => {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const row: MaterializedRow = next.value;
      const res = await request(url, {
        method: 'POST',
        body: JSON.stringify(row),
        headers: { 'content-type': 'application/json' },
        dispatcher,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${text.slice(0, 200)}`);
      const result = JSON.parse(text) as Record<string, unknown>;
      await out.write({ ...result, _ng_task_index: row._ng_task_index, _ng_rollout_index: row._ng_rollout_index });
      count++;
    }
  };
  try {
    await Promise.all(Array.from({ length: opts.concurrency }, lane));
  } finally {
    await out.close();
    await dispatcher.close();
  }
  return { rows: count, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
