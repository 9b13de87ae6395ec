// Validator throughput against NeMo Gym's validate_pivot_dataset.py (0.4.0), in one run on the same
// generated files, for two row shapes: short single-turn pivots and long multi-turn pivots with many
// tools. Timed twice: in process (its validate_file() against our validatePivotDataset()), and whole
// process (`python validate_pivot_dataset.py` against `bin/pivot-miner.js validate`, start-up
// included, same exit code and output required). Prints each figure beside the Python baseline and
// the ratio; the last line is JSON.
// Run: npx tsx scripts/bench/validator.ts
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { validatePivotDataset } from '../../gym/validator';
import { median, nemoGymPython, referenceValidatorScript, runPythonAnchor } from './python/nemoGym';

const WARMUP_PASSES = 1;
const PASSES = 3;
/** Python and TypeScript take turns, so a load change on the machine hits both sides alike. */
const ROUNDS = 2;
const REQUIRE_FIELD = 'provenance.uuid';

const words = ['weather', 'flight', 'refund', 'order', 'tomorrow', 'hotel', 'budget', 'invoice', 'receipt', 'window', 'seat', 'lounge', 'transfer', 'taxi', 'museum', 'dinner'];
/** Mostly ASCII with the odd accented name, as English tool-use data is: one row in five has one. */
const place = (index: number) => (index % 5 === 0 ? 'Zürich' : 'Boston');
const text = (seed: number, count: number) => Array.from({ length: count }, (_, k) => words[(seed * 7 + k * 3) % words.length]).join(' ');

function tool(index: number, detailed: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = { query: { type: 'string', description: text(index, detailed ? 12 : 4) } };
  if (detailed) {
    Object.assign(properties, {
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      radius_km: { type: 'number', minimum: 0.5, maximum: 250.75 },
      tags: { type: 'array', items: { type: 'string', enum: words.slice(0, 6) } },
      filters: { type: 'object', properties: { from: { type: 'string', format: 'date' }, strict: { type: 'boolean' } } },
    });
  }
  return { type: 'function', name: `tool_${index}`, description: text(index + 1, detailed ? 20 : 6), parameters: { type: 'object', properties, required: ['query'] }, strict: detailed };
}

function provenance(index: number): Record<string, unknown> {
  return { source_task_index: index, rollout_index: index % 8, reward: 1.0, pivot_index: index % 5, uuid: `uuid-${index}` };
}

/** One user turn, a handful of tools, the next call or a message: what most pivot rows look like. */
function shortRow(index: number): string {
  const isMessage = index % 10 === 0;
  return JSON.stringify({
    responses_create_params: {
      input: [{ role: 'system', content: 'You are a helpful travel agent.' }, { role: 'user', content: `${text(index, 14)} in ${place(index)} #${index}` }],
      tools: [0, 1, 2, 3].map((k) => tool(k, false)),
      tool_choice: 'auto',
      parallel_tool_calls: false,
      temperature: 0.7,
    },
    expected_action: isMessage
      ? { type: 'message', content: text(index, 9) }
      : { type: 'function_call', name: `tool_${index % 4}`, arguments: JSON.stringify({ query: text(index, 3), limit: index % 31, ratio: 0.25 }) },
    agent_ref: { type: 'responses_api_agents', name: `bench_agent_${index % 3}` },
    provenance: provenance(index),
  });
}

/** A pivot deep in a long tool-use trajectory: 8 turns of reasoning, calls and outputs, 24 tools. */
function longRow(index: number): string {
  const input: unknown[] = [{ role: 'system', content: `${text(index, 60)} ${place(index)}` }];
  for (let turn = 0; turn < 8; turn++) {
    const callId = `call_${index}_${turn}`;
    input.push(
      { role: 'user', content: text(index + turn, 40) },
      { type: 'reasoning', id: `rs_${index}_${turn}`, summary: [{ type: 'summary_text', text: text(turn, 30) }] },
      { type: 'function_call', call_id: callId, name: `tool_${turn}`, arguments: JSON.stringify({ query: text(turn, 5), limit: 20, radius_km: 12.5 }) },
      { type: 'function_call_output', call_id: callId, output: JSON.stringify({ results: [1, 2, 3].map((k) => ({ id: k, title: text(k + turn, 8), score: k / 7 })) }) },
      { type: 'message', role: 'assistant', id: `msg_${index}_${turn}`, status: 'completed', content: [{ type: 'output_text', text: text(index * turn, 35), annotations: [] }] },
    );
  }
  return JSON.stringify({
    responses_create_params: {
      input,
      tools: Array.from({ length: 24 }, (_, k) => tool(k, true)),
      tool_choice: 'auto',
      parallel_tool_calls: false,
      max_output_tokens: 4096,
    },
    expected_action: { type: 'function_call', name: `tool_${index % 24}`, arguments: JSON.stringify({ query: text(index, 6), limit: 5, radius_km: 3.75, tags: ['hotel'] }) },
    agent_ref: { type: 'responses_api_agents', name: 'long_horizon_agent' },
    provenance: provenance(index),
  });
}

const SHAPES = [
  { name: 'short single-turn pivots', rows: 50_000, row: shortRow },
  { name: 'long multi-turn pivots, 24 tools', rows: 2_000, row: longRow },
] as const;

async function writeRows(file: string, rows: number, row: (index: number) => string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < rows; i++) {
    if (!out.write(row(i) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

interface Rates {
  rates: number[];
  cpuRates: number[];
}

async function timeOurs(file: string, rows: number, passes: number, threads: number, into: Rates): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
    const wall = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const result = await validatePivotDataset({ path: file, requireFields: [REQUIRE_FIELD], threads });
    const used = process.cpuUsage(cpu);
    if (result.exitCode !== 0 || !result.stdout.startsWith(`rows: ${rows}\n`)) throw new Error(`validator rejected ${file}: ${result.stderr}`);
    into.rates.push(rows / (Number(process.hrtime.bigint() - wall) / 1e9));
    into.cpuRates.push(rows / ((used.user + used.system) / 1e6));
  }
}

const run = promisify(execFile);
const cli = path.resolve(__dirname, '../../bin/pivot-miner.js');

const processRunSchema = z.object({ wall: z.number(), cpu: z.number(), exit_code: z.number().int(), stdout: z.string(), stderr: z.string() });

/** One whole run of a validator process, timed by python/process_time.py (wall and CPU seconds). */
async function timeProcess(python: string, command: string[]): Promise<z.infer<typeof processRunSchema>> {
  const { stdout } = await run(python, [path.join(__dirname, 'python/process_time.py'), ...command], { maxBuffer: 1 << 24 });
  return processRunSchema.parse(JSON.parse(stdout));
}

/** Whole-process rates (per wall-clock and per CPU second), Python and ours taking turns; throws
 * unless both exit with the same code and print the same. */
async function timeProcesses(python: string, reference: string, file: string, rows: number): Promise<{ python: Rates; ours: Rates }> {
  const args = ['--path', file, '--require-field', REQUIRE_FIELD];
  const ourCommand = [process.execPath, cli, 'validate', ...args];
  const rates = { python: { rates: [], cpuRates: [] } as Rates, ours: { rates: [], cpuRates: [] } as Rates };
  // The first run of ours may bundle the command (bin/cachedBundle.js): a warm-up, as for Python.
  await timeProcess(python, ourCommand);
  for (let pass = 0; pass < PASSES; pass++) {
    const theirs = await timeProcess(python, [python, reference, ...args]);
    const ours = await timeProcess(python, ourCommand);
    if (ours.exit_code !== theirs.exit_code || ours.stdout !== theirs.stdout || ours.stderr !== theirs.stderr) {
      throw new Error(`validators disagree on ${file}:\n${JSON.stringify(theirs)}\n---\n${JSON.stringify(ours)}`);
    }
    for (const [side, timed] of [[rates.python, theirs], [rates.ours, ours]] as const) {
      side.rates.push(rows / timed.wall);
      side.cpuRates.push(rows / timed.cpu);
    }
  }
  return rates;
}

const perSecond = (rate: number) => `${Math.round(rate).toLocaleString('en-US')} rows/s`;

async function main(): Promise<void> {
  const python = await nemoGymPython();
  const reference = await referenceValidatorScript(python);
  const threads = availableParallelism();
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-bench-'));
  const summary: Record<string, number> = { threads };
  try {
    for (const [shapeIndex, shape] of SHAPES.entries()) {
      const file = path.join(dir, `shape${shapeIndex}.jsonl`);
      await writeRows(file, shape.rows, shape.row);
      const mib = (await stat(file)).size / 2 ** 20;
      const py: Rates = { rates: [], cpuRates: [] };
      const single: Rates = { rates: [], cpuRates: [] };
      const parallel: Rates = { rates: [], cpuRates: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const anchor = await runPythonAnchor(python, 'validator_anchor.py', [reference, file, String(PASSES), String(WARMUP_PASSES), REQUIRE_FIELD]);
        if (anchor.cases !== shape.rows) throw new Error(`python counted ${anchor.cases} rows, not ${shape.rows}`);
        py.rates.push(...anchor.rates);
        py.cpuRates.push(...anchor.cpu_rates);
        await timeOurs(file, shape.rows, WARMUP_PASSES, 1, { rates: [], cpuRates: [] });
        await timeOurs(file, shape.rows, PASSES, 1, single);
        if (threads > 1) await timeOurs(file, shape.rows, PASSES, threads, parallel);
      }
      const processes = await timeProcesses(python, reference, file, shape.rows);
      const pyRate = median(py.rates);
      const ratio = (rates: Rates) => median(rates.rates) / pyRate;
      const cpuRatio = median(single.cpuRates) / median(py.cpuRates);
      console.log(`validator, ${shape.name} (${shape.rows.toLocaleString('en-US')} rows, ${mib.toFixed(1)} MiB, ${((mib * 1024) / shape.rows).toFixed(1)} KiB/row):`);
      console.log(`  python ${perSecond(pyRate)}`);
      console.log(`  ours, 1 thread    ${perSecond(median(single.rates))}  ours/python ${ratio(single).toFixed(1)}x  (per CPU second ${cpuRatio.toFixed(1)}x)`);
      if (threads > 1) console.log(`  ours, ${threads} threads   ${perSecond(median(parallel.rates))}  ours/python ${ratio(parallel).toFixed(1)}x`);
      const processRatio = median(processes.ours.rates) / median(processes.python.rates);
      const processCpuRatio = median(processes.ours.cpuRates) / median(processes.python.cpuRates);
      console.log(`  whole process: python ${perSecond(median(processes.python.rates))}, pivot-miner validate ${perSecond(median(processes.ours.rates))}  ours/python ${processRatio.toFixed(1)}x  (per CPU second ${processCpuRatio.toFixed(1)}x)`);
      const key = shapeIndex === 0 ? 'short' : 'long';
      Object.assign(summary, {
        [`${key}_python_rows_per_s`]: Math.round(pyRate),
        [`${key}_ours_1_thread_rows_per_s`]: Math.round(median(single.rates)),
        [`${key}_ours_1_thread_over_python`]: Number(ratio(single).toFixed(2)),
        [`${key}_ours_1_thread_over_python_cpu`]: Number(cpuRatio.toFixed(2)),
        [`${key}_process_python_rows_per_s`]: Math.round(median(processes.python.rates)),
        [`${key}_process_ours_rows_per_s`]: Math.round(median(processes.ours.rates)),
        [`${key}_process_ours_over_python`]: Number(processRatio.toFixed(2)),
        [`${key}_process_ours_over_python_cpu`]: Number(processCpuRatio.toFixed(2)),
        ...(threads > 1 && {
          [`${key}_ours_threads_rows_per_s`]: Math.round(median(parallel.rates)),
          [`${key}_ours_threads_over_python`]: Number(ratio(parallel).toFixed(2)),
        }),
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ bench: 'validator', ...summary, passes: PASSES * ROUNDS }));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
