import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { runCli } from './cli';
import { checksums } from './runDir';

// `pivot-miner check` as its tests run it: in a base directory of its own holding a config and
// task rows, asserting that the command wrote nothing there.

const repoRoot = path.resolve(__dirname, '../..');
export const demoTasks = path.join(repoRoot, 'configs/demo_tasks.jsonl');

export type Config = Record<string, any>;

const baseDirs: string[] = [];

export function demoTaskLines(): string[] {
  return readFileSync(demoTasks, 'utf8').trimEnd().split('\n');
}

/** A base directory holding `config.yaml` (text or config) and `data/tasks.jsonl` (lines), as a worker would see them. */
export function baseDirWith(config: Config | string, taskLines = demoTaskLines()): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-check-'));
  baseDirs.push(dir);
  writeFileSync(path.join(dir, 'config.yaml'), typeof config === 'string' ? config : YAML.stringify(config));
  const data = path.join(dir, 'data');
  mkdirSync(data);
  writeFileSync(path.join(data, 'tasks.jsonl'), taskLines.map((l) => `${l}\n`).join(''));
  return dir;
}

export function removeBaseDirs(): void {
  for (const dir of baseDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Every file (with bytes and mtime) and every directory under `dir`. */
function snapshot(dir: string): string {
  const entries = (readdirSync(dir, { recursive: true }) as string[]).sort();
  return JSON.stringify({ entries, files: checksums(dir) });
}

/** Runs `pivot-miner <command> -c config.yaml [args]` in `baseDir` and checks that it wrote nothing there. */
export async function check(baseDir: string, env: NodeJS.ProcessEnv, command = 'check', args: string[] = []) {
  const before = snapshot(baseDir);
  const result = await runCli([command, '-c', 'config.yaml', ...args], {
    cwd: baseDir,
    env: { PIVOT_MINER_BASE_DIR: baseDir, ...env },
  });
  assert.equal(snapshot(baseDir), before, `${command} wrote nothing`);
  return result;
}

/** 1-based line of the first line of `text` containing `needle`. */
export function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  assert.ok(index >= 0, `${needle} is in the text`);
  return index + 1;
}

/** The problem lines of a failed check (after its "N problems:" header). */
export function problems(stderr: string): string[] {
  const header = stderr.split('\n').findIndex((line) => /^\d+ problems?:$/.test(line));
  assert.ok(header >= 0, stderr);
  return stderr
    .split('\n')
    .slice(header + 1)
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim());
}
