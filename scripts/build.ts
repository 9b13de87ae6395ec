// `npm run build` (also run by `npm install`/`npm ci` through `prepare`, and by `npm run demo` and
// `npm test`): everything the project runs, made once into dist/, as Temporal's samples-typescript
// `production` sample builds its workflow bundle ahead of the worker. At run time nothing of ours
// is compiled: bin/pivot-miner.js loads dist/, and refuses a checkout edited since (bin/built.js).
//
//   dist/cli.js                the CLI (every command but validate); packages stay in node_modules
//   dist/client.js             client/, the package's `main`: what a training platform imports
//   dist/types/                its declarations (package.json `types`), by tsc from client/index.ts
//   dist/workflow-bundle.js    workflows/ for Worker.create({ workflowBundle: { codePath } })
//   dist/validate.js           `validate` alone, with its dependencies inlined: a short command
//                              measured process for process against NeMo Gym's Python validator
//   dist/validateEarly.js      what starts the validator's threads before the command has loaded
//   dist/validatorWorker.js    what those threads run: the row checks alone
//   dist/strictJson.wasm       gym/validator/strictJson.wat assembled by wabt
//   dist/validate.code         V8's code cache for dist/validate.js, made by one validate run here
//   dist/build-stamp.json      the sources this was built from (bin/built.js)
//
// A build of unchanged sources is skipped: the stamp says so in a few milliseconds.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import * as built from '../bin/built';

const root = built.repoRoot;
const dist = built.distDir;
const force = process.argv.includes('--force');

function writeAtomically(file: string, data: string | Uint8Array): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, data);
  renameSync(temporary, file);
}

const common: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
};

async function bundle(entry: string, outName: string, options: BuildOptions = {}): Promise<void> {
  await build({ ...common, entryPoints: [entry], outfile: path.join(dist, outName), ...options });
}

async function workflowBundle(): Promise<void> {
  const { bundleWorkflowCode, DefaultLogger } = await import('@temporalio/worker');
  // Webpack's module list at INFO is noise in a build log; warnings and errors still show.
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.join(root, 'workflows'),
    logger: new DefaultLogger('WARN'),
  });
  writeAtomically(path.join(dist, 'workflow-bundle.js'), code);
}

/** The client's declarations and those of every source its types reach, emitted by tsc. */
async function clientDeclarations(): Promise<void> {
  const ts = (await import('typescript')).default;
  const tsconfig = ts.readConfigFile(path.join(root, 'tsconfig.json'), (file) => ts.sys.readFile(file));
  const { options } = ts.parseJsonConfigFileContent(tsconfig.config, ts.sys, root);
  const out = path.join(dist, 'types');
  const staging = `${out}.${process.pid}.tmp`;
  const program = ts.createProgram([path.join(root, 'client/index.ts')], {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    rootDir: root,
    outDir: staging,
  });
  const { diagnostics } = program.emit();
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' };
    throw new Error(`client declarations: ${ts.formatDiagnostics(diagnostics, host)}`);
  }
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
}

async function strictJsonWasm(): Promise<void> {
  const file = path.join(root, 'gym/validator/strictJson.wat');
  const wabt = await (await import('wabt')).default();
  const module = wabt.parseWat(file, readFileSync(file, 'utf8'), { simd: true });
  try {
    module.validate();
    writeAtomically(path.join(dist, 'strictJson.wasm'), Buffer.from(module.toBinary({}).buffer));
  } finally {
    module.destroy();
  }
}

/** One validate run of a small fixture-shaped file, so V8 writes dist/validate.code with every
 * function that run compiled; later runs only read it (bin/pivot-miner.js). */
function validateCodeCache(): void {
  const sample = path.join(dist, 'validate-sample.jsonl');
  const row = {
    responses_create_params: {
      input: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    expected_action: { type: 'function_call', name: 'get_weather', arguments: '{"city": "Paris"}' },
    agent_ref: { type: 'responses_api_agents', name: 'sample_agent' },
  };
  writeFileSync(sample, `${JSON.stringify(row)}\n`);
  rmSync(path.join(dist, 'validate.code'), { force: true });
  const result = spawnSync(process.execPath, [path.join(root, 'bin/pivot-miner.js'), 'validate', '--path', sample], {
    env: { ...process.env, PIVOT_MINER_WRITE_CODE_CACHE: '1' },
    encoding: 'utf8',
  });
  rmSync(sample, { force: true });
  if (result.status !== 0) throw new Error(`the validate bundle does not run: ${result.stderr || result.stdout}`);
}

async function main(): Promise<void> {
  if (!force && built.staleness() === undefined) {
    console.error('[build] dist/ is up to date');
    return;
  }
  const started = Date.now();
  // Stamped before reading: an edit made while the build runs then shows as stale at the next start.
  const stamp = built.sourceStamp();
  rmSync(built.STAMP_FILE, { force: true });
  mkdirSync(dist, { recursive: true });
  await Promise.all([
    bundle('scripts/cli.ts', 'cli.js', { packages: 'external' }),
    bundle('client/index.ts', 'client.js', { packages: 'external' }),
    bundle('scripts/commands/validateMain.ts', 'validate.js'),
    bundle('scripts/commands/validateEarly.ts', 'validateEarly.js'),
    bundle('gym/validator/parallel.ts', 'validatorWorker.js'),
    strictJsonWasm(),
  ]);
  await workflowBundle();
  await clientDeclarations();
  writeAtomically(built.STAMP_FILE, JSON.stringify(stamp));
  validateCodeCache();
  console.error(`[build] dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

main().catch((err: unknown) => {
  console.error(`[build] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
