import { spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `bin/pivot-miner.js <args>` to completion without blocking this process, so servers the test
 * runs in process (a model, a head server) can answer the command meanwhile.
 */
export async function runCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/pivot-miner.js'), ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}
