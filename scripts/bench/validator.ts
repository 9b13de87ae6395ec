// Validator throughput against NeMo Gym's validate_pivot_dataset.py (0.4.0), in one run on the same
// generated files, for two row shapes: short single-turn travel pivots (about 1.6 KiB, 90,000 rows) and
// NeMo Gym's own tool-use example rows (about 27 KiB) repeated, each file some 150 MB, the sizes issue
// 12 measured the Python validator on. Timed twice: in process (its
// validate_file() against our validatePivotDataset()), and whole process (`python
// validate_pivot_dataset.py` against `bin/pivot-miner validate`, the command as npm installs it,
// start-up included, same exit code and output required; ours with its default threads and with
// one), in the bench's own environment. Prints each figure beside the Python baseline and the
// ratio, and what starting Node costs here; the last line is JSON.
// Run: npx tsx scripts/bench/validator.ts
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { validatePivotDataset } from '../../gym/validator';
import { defaultThreads } from '../commands/validate';
import { parseFlags } from './flags';
import { median, nemoGymPython, referenceValidatorScript, runPythonAnchor } from './python/nemoGym';
import { built } from '../../bin/built';
import { shapes, writeRows } from './validatorRows';

const run = promisify(execFile);
const WARMUP_PASSES = 1;
const PASSES = 3;
/** Python and TypeScript take turns, so a load change on the machine hits both sides alike. */
const ROUNDS = 2;
const REQUIRE_FIELD = 'provenance.uuid';

interface Rates {
  rates: number[];
  cpuRates: number[];
}

/** What the CLI's worker threads load (a bundle of the row checks); the source itself would start
 * each worker through tsx, seconds that no run of the command pays. */
const workerScript = built('validatorWorker.js');

async function timeOurs(file: string, rows: number, passes: number, threads: number, into: Rates): Promise<void> {
  for (let pass = 0; pass < passes; pass++) {
    const wall = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    const result = await validatePivotDataset({ path: file, requireFields: [REQUIRE_FIELD], threads, workerScript });
    const used = process.cpuUsage(cpu);
    if (result.exitCode !== 0 || !result.stdout.startsWith(`rows: ${rows}\n`))
      throw new Error(`validator rejected ${file}: ${result.stderr}`);
    into.rates.push(rows / (Number(process.hrtime.bigint() - wall) / 1e9));
    into.cpuRates.push(rows / ((used.user + used.system) / 1e6));
  }
}

/** The `pivot-miner` command as npm installs it (package.json "bin"), a launcher of bin/pivot-miner.js. */
const cli = path.resolve(__dirname, '../../bin/pivot-miner');

const processRunSchema = z.object({
  wall: z.number(),
  cpu: z.number(),
  exit_code: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
});

/** One whole run of a validator process, timed by python/process_time.py (wall and CPU seconds). */
async function timeProcess(python: string, command: string[]): Promise<z.infer<typeof processRunSchema>> {
  const { stdout } = await run(python, [path.join(__dirname, 'python/process_time.py'), ...command], {
    maxBuffer: 1 << 24,
  });
  return processRunSchema.parse(JSON.parse(stdout));
}

const emptyRates = (): Rates => ({ rates: [], cpuRates: [] });

/** Whole-process rates (per wall-clock and per CPU second) of Python and of ours, with its default
 * threads and with one, taking turns; throws unless all exit with the same code and print the same. */
async function timeProcesses(
  python: string,
  reference: string,
  file: string,
  rows: number,
): Promise<{ python: Rates; ours: Rates; oursOneThread: Rates }> {
  const args = ['--path', file, '--require-field', REQUIRE_FIELD];
  const commands = {
    python: [python, reference, ...args],
    ours: [cli, 'validate', ...args],
    oursOneThread: [cli, 'validate', ...args, '--threads', '1'],
  };
  const rates = { python: emptyRates(), ours: emptyRates(), oursOneThread: emptyRates() };
  // A warm-up run of each side, so neither pays for a cold page cache.
  await timeProcess(python, commands.ours);
  for (let pass = 0; pass < PASSES; pass++) {
    const theirs = await timeProcess(python, commands.python);
    for (const side of ['python', 'ours', 'oursOneThread'] as const) {
      const timed = side === 'python' ? theirs : await timeProcess(python, commands[side]);
      if (timed.exit_code !== theirs.exit_code || timed.stdout !== theirs.stdout || timed.stderr !== theirs.stderr) {
        throw new Error(`validators disagree on ${file}:\n${JSON.stringify(theirs)}\n---\n${JSON.stringify(timed)}`);
      }
      rates[side].rates.push(rows / timed.wall);
      rates[side].cpuRates.push(rows / timed.cpu);
    }
  }
  return rates;
}

const perSecond = (rate: number) => `${Math.round(rate).toLocaleString('en-US')} rows/s`;

/** Median wall seconds of `node -e 0` as the environment is, and without NODE_EXTRA_CA_CERTS, which
 * Node parses as it starts and the launcher drops for `validate` (see bin/pivot-miner). */
async function nodeStartSeconds(python: string): Promise<{ asIs: number; withoutExtraCaCerts: number }> {
  const time = async (command: string[]) => {
    const walls: number[] = [];
    for (let i = 0; i < 5; i++) walls.push((await timeProcess(python, command)).wall);
    return median(walls);
  };
  const bare = [process.execPath, '-e', '0'];
  return { asIs: await time(bare), withoutExtraCaCerts: await time(['env', '-u', 'NODE_EXTRA_CA_CERTS', ...bare]) };
}

async function main(): Promise<void> {
  const python = await nemoGymPython();
  const reference = await referenceValidatorScript(python);
  const threads = availableParallelism();
  const dir = await mkdtemp(path.join(tmpdir(), 'pivot-validator-bench-'));
  const summary: Record<string, number> = { threads };
  const start = await nodeStartSeconds(python);
  console.log(
    `node start-up (node -e 0, median of 5): ${start.asIs.toFixed(3)} s in this environment, ${start.withoutExtraCaCerts.toFixed(3)} s without NODE_EXTRA_CA_CERTS (${process.env.NODE_EXTRA_CA_CERTS === undefined ? 'unset here' : 'set here; `pivot-miner validate` runs without it'})`,
  );
  Object.assign(summary, {
    node_start_s: Number(start.asIs.toFixed(3)),
    node_start_without_extra_ca_certs_s: Number(start.withoutExtraCaCerts.toFixed(3)),
  });
  try {
    for (const [shapeIndex, shape] of (await shapes(python)).entries()) {
      const file = path.join(dir, `shape${shapeIndex}.jsonl`);
      await writeRows(file, shape.rows, shape.row);
      const mib = (await stat(file)).size / 2 ** 20;
      const py = emptyRates();
      const single = emptyRates();
      const parallel = emptyRates();
      for (let round = 0; round < ROUNDS; round++) {
        const anchor = await runPythonAnchor(python, 'validator_anchor.py', [
          reference,
          file,
          String(PASSES),
          String(WARMUP_PASSES),
          REQUIRE_FIELD,
        ]);
        if (anchor.cases !== shape.rows) throw new Error(`python counted ${anchor.cases} rows, not ${shape.rows}`);
        py.rates.push(...anchor.rates);
        py.cpuRates.push(...anchor.cpu_rates);
        await timeOurs(file, shape.rows, WARMUP_PASSES, 1, emptyRates());
        await timeOurs(file, shape.rows, PASSES, 1, single);
        if (threads > 1) await timeOurs(file, shape.rows, PASSES, threads, parallel);
      }
      const processes = await timeProcesses(python, reference, file, shape.rows);
      const pyRate = median(py.rates);
      const ratio = (rates: Rates) => median(rates.rates) / pyRate;
      const cpuRatio = median(single.cpuRates) / median(py.cpuRates);
      console.log(
        `validator, ${shape.name} (${shape.rows.toLocaleString('en-US')} rows, ${mib.toFixed(1)} MiB, ${((mib * 1024) / shape.rows).toFixed(1)} KiB/row):`,
      );
      console.log(`  python ${perSecond(pyRate)}`);
      console.log(
        `  ours, 1 thread    ${perSecond(median(single.rates))}  ours/python ${ratio(single).toFixed(1)}x  (per CPU second ${cpuRatio.toFixed(1)}x)`,
      );
      if (threads > 1)
        console.log(
          `  ours, ${threads} threads   ${perSecond(median(parallel.rates))}  ours/python ${ratio(parallel).toFixed(1)}x`,
        );
      const processRatio = (rates: Rates) => median(rates.rates) / median(processes.python.rates);
      const processCpuRatio = (rates: Rates) => median(rates.cpuRates) / median(processes.python.cpuRates);
      const defaultThreadCount = defaultThreads(file);
      console.log(`  whole process (python is single-threaded): python ${perSecond(median(processes.python.rates))}`);
      for (const [label, rates] of [
        [`${defaultThreadCount} thread(s), the default`, processes.ours],
        ['--threads 1', processes.oursOneThread],
      ] as const) {
        console.log(
          `    pivot-miner validate, ${label}: ${perSecond(median(rates.rates))}  ours/python wall ${processRatio(rates).toFixed(1)}x, per CPU second ${processCpuRatio(rates).toFixed(1)}x`,
        );
      }
      const key = shapeIndex === 0 ? 'short' : 'long';
      Object.assign(summary, {
        [`${key}_python_rows_per_s`]: Math.round(pyRate),
        [`${key}_ours_1_thread_rows_per_s`]: Math.round(median(single.rates)),
        [`${key}_ours_1_thread_over_python`]: Number(ratio(single).toFixed(2)),
        [`${key}_ours_1_thread_over_python_cpu`]: Number(cpuRatio.toFixed(2)),
        [`${key}_process_python_rows_per_s`]: Math.round(median(processes.python.rates)),
        [`${key}_process_ours_threads`]: defaultThreadCount,
        [`${key}_process_ours_rows_per_s`]: Math.round(median(processes.ours.rates)),
        [`${key}_process_ours_over_python`]: Number(processRatio(processes.ours).toFixed(2)),
        [`${key}_process_ours_over_python_cpu`]: Number(processCpuRatio(processes.ours).toFixed(2)),
        [`${key}_process_ours_1_thread_over_python`]: Number(processRatio(processes.oursOneThread).toFixed(2)),
        [`${key}_process_ours_1_thread_over_python_cpu`]: Number(processCpuRatio(processes.oursOneThread).toFixed(2)),
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

parseFlags('npx tsx scripts/bench/validator.ts (no flags)', {});
main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
