// Throughput of the pivot-dataset validator on a generated 100k-row valid file (no assertions).
// Run: npx tsx scripts/bench/validator.ts [rows]
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { validatePivotDataset } from '../../gym/validator';

const tools = ['get_weather', 'search_flights', 'book_hotel', 'cancel_order'];

function pivotRow(index: number): string {
  const tool = tools[index % tools.length];
  const input = Array.from({ length: 1 + (index % 5) }, (_, turn) => ({
    role: turn % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${turn} of task ${index}: please help with request #${index * 7}`,
  }));
  const isMessage = index % 10 === 0;
  return JSON.stringify({
    responses_create_params: {
      input,
      tools: tools.map((name) => ({ type: 'function', name, parameters: { type: 'object', properties: { city: { type: 'string' } } } })),
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: isMessage
      ? { type: 'message', content: `done with ${index}` }
      : { type: 'function_call', name: tool, arguments: JSON.stringify({ city: 'Paris', day: index % 31, ratio: 0.5 }) },
    agent_ref: { type: 'responses_api_agents', name: `bench_agent_${index % 3}` },
    provenance: { source_task_index: index, uuid: `uuid-${index}` },
  });
}

async function writeRows(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < rows; i++) {
    if (!out.write(pivotRow(i) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 100_000);
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-bench-'));
  try {
    const file = path.join(dir, 'pivots.jsonl');
    await writeRows(file, rows);
    const { size } = await stat(file);
    const started = process.hrtime.bigint();
    const result = await validatePivotDataset({ path: file, requireFields: ['provenance.uuid'] });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
    console.log(`validator: exit ${result.exitCode}, ${rows} rows, ${(size / 2 ** 20).toFixed(1)} MiB in ${seconds.toFixed(2)} s`);
    console.log(`validator rows/second: ${Math.round(rows / seconds)} (${(size / 2 ** 20 / seconds).toFixed(1)} MiB/s, heap ${heapMiB.toFixed(0)} MiB)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
