import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './net';
import { repoRoot } from '../../bin/built';

// A real policy model for local profiling: llama.cpp's llama-server serving Gemma 3 270M, as a
// child process on a free 127.0.0.1 port. Gemma 3 270M ships no tool-use chat template, so prompts
// are rendered with llama.cpp's Hermes-2-Pro tool-use template (`--jinja`): it describes the tools
// and the `<tool_call>` format llama-server parses and, with `tool_choice: "required"`, constrains
// generation to.

/** The name requests and reports use for the model; llama-server answers to it through `--alias`. */
export const GEMMA_MODEL_NAME = 'gemma-3-270m-q4_k_m';

export interface GemmaInstall {
  serverBin: string;
  modelPath: string;
  templatePath: string;
}

function runEnsureScript(script: string): string[] {
  return execFileSync('bash', [path.join(repoRoot, 'scripts', script)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n');
}

/** Provisions (first call only: the llama-server build takes ~10-20 min on 2 cores) and locates everything. */
export function ensureGemma(): GemmaInstall {
  const [modelPath, templatePath] = runEnsureScript('ensure-gemma.sh');
  const [serverBin] = runEnsureScript('ensure-llama-server.sh');
  if (!modelPath || !templatePath || !serverBin)
    throw new Error('scripts/ensure-gemma.sh or ensure-llama-server.sh printed no path');
  return { serverBin, modelPath, templatePath };
}

const TURN_TOKENS: Array<[string, string]> = [
  ['<|im_start|>assistant', '<start_of_turn>model'],
  [
    "'<|im_start|>' + message.role + '",
    "'<start_of_turn>' + ('model' if message.role == 'assistant' else message.role) + '",
  ],
  ["'<|im_start|>' + message.role }}", "'<start_of_turn>model' }}"],
  ['<|im_start|>', '<start_of_turn>'],
  ['<|im_end|>', '<end_of_turn>'],
];

/**
 * Hermes-2-Pro's tool-use template with Gemma's own turn tokens. Gemma's tokenizer has no
 * `<|im_start|>`/`<|im_end|>`, so the original turns reach the model as plain text it imitates
 * instead of answering; with `<start_of_turn>`/`<end_of_turn>` and the `model` role it answers.
 * Measured on the same pivot and seeds 0-5: 2 of 6 samples held a tool call, none with the
 * original turns. The tool description and `<tool_call>` format, which llama-server parses, stay.
 */
export async function gemmaToolUseTemplate(hermesTemplatePath: string, outDir: string): Promise<string> {
  let text = await readFile(hermesTemplatePath, 'utf8');
  for (const [from, to] of TURN_TOKENS) {
    if (!text.includes(from))
      throw new Error(`${hermesTemplatePath}: expected ${JSON.stringify(from)} in the Hermes-2-Pro tool-use template`);
    text = text.split(from).join(to);
  }
  await mkdir(outDir, { recursive: true });
  const out = path.join(outDir, 'gemma3-hermes-2-pro-tool-use.jinja');
  // Written beside and renamed: a second server starting at the same moment never reads half a file.
  const tmp = `${out}.${process.pid}.tmp`;
  await writeFile(tmp, text);
  await rename(tmp, out);
  return out;
}

export interface LlamaServerOptions {
  install: GemmaInstall;
  /**
   * Parallel slots. Two on a 2-core machine: llama-server batches the slots' tokens into one
   * forward pass, so a second slot adds throughput without a second set of threads.
   */
  slots?: number;
  /** Context per slot in tokens; the pivots' prompts (tools included) must fit. */
  contextPerSlot?: number;
  /**
   * CPU threads. One by default: llama.cpp's OpenMP threads spin while they wait for each other,
   * so on a small machine shared with other work (the tests' servers) a second thread slows it down.
   */
  threads?: number;
  /** Where the server's own log goes; by default it is discarded. */
  logFile?: string;
  readyTimeoutMs?: number;
}

export interface LlamaServerHandle {
  /** Base URL serving /v1/responses and /v1/chat/completions. */
  url: string;
  modelName: string;
  slots: number;
  stop(): Promise<void>;
}

/** A 503 means "still loading", anything else but 200 means it never will. */
async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(new URL('/health', url), { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000, undefined, { ref: false }).then(() => child.kill('SIGKILL'))]);
  await exited;
}

export async function startLlamaServer(opts: LlamaServerOptions): Promise<LlamaServerHandle> {
  const slots = opts.slots ?? 2;
  const contextPerSlot = opts.contextPerSlot ?? 8192;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const template = await gemmaToolUseTemplate(opts.install.templatePath, path.dirname(opts.install.modelPath));
  const args = [
    ['--model', opts.install.modelPath],
    ['--jinja'],
    ['--chat-template-file', template],
    ['--alias', GEMMA_MODEL_NAME],
    ['--host', '127.0.0.1'],
    ['--port', String(port)],
    ['--parallel', String(slots)],
    // Without a unified KV buffer the context is split evenly between slots.
    ['--ctx-size', String(contextPerSlot * slots)],
    ['--threads', String(opts.threads ?? 1)],
    ['--no-webui'],
  ].flat();
  const logFd = opts.logFile ? openSync(opts.logFile, 'w') : undefined;
  const child = spawn(opts.install.serverBin, args, { stdio: ['ignore', logFd ?? 'ignore', logFd ?? 'ignore'] });
  if (logFd !== undefined) closeSync(logFd);
  // A crashed test or demo must not leave a model server holding two cores.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const handle: LlamaServerHandle = {
    url,
    modelName: GEMMA_MODEL_NAME,
    slots,
    async stop() {
      process.removeListener('exit', killOnExit);
      await stopChild(child);
    },
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  while (!(await healthy(url))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await handle.stop();
      throw new Error(
        `llama-server exited during start-up (${child.exitCode ?? child.signalCode})${opts.logFile ? `; see ${opts.logFile}` : ''}`,
      );
    }
    if (Date.now() >= deadline) {
      await handle.stop();
      throw new Error(`llama-server did not report healthy on ${url} within ${opts.readyTimeoutMs ?? 120_000} ms`);
    }
    await sleep(250);
  }
  return handle;
}
