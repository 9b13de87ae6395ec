import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { startCollectServers, type CollectServers } from './collect070Servers';

// The cases of a test file comparing a collection with NeMo Gym 0.7.0's (test/helpers/collect070.ts):
// the servers, started before its tests and closed after them, demo task rows, and a directory per case.

export interface CollectCases {
  /** The servers and the stack's agent name, once the file's `before` has run. */
  opened: () => Promise<{ servers: CollectServers; agent: string }>;
  /** Demo task `i` with `fields` after its task_id, so a replaced agent_ref shows whether it kept its place. */
  task: (i: number, fields?: Record<string, unknown>) => Record<string, unknown>;
  /** A directory of its own for a case, with `rows` as its task file. */
  caseRows: (name: string, rows: Record<string, unknown>[]) => { caseDir: string; rowsFile: string };
}

/** Registers the file's `before` and `after` hooks: servers with `seed` and `aliases`, a temporary directory named by `tmpPrefix`. */
export function collectCases(seed: number, aliases: string[], tmpPrefix: string): CollectCases {
  // Started by whichever hook asks first: node may start the file's own before hook while this one awaits.
  let started: Promise<CollectServers> | undefined;
  const servers = () => (started ??= startCollectServers(seed, aliases));
  let dir: string | undefined;
  let demo: Record<string, unknown>[] = [];
  before(async () => {
    await servers();
    dir = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
    const lines = readFileSync(path.resolve(__dirname, '../../configs/demo_tasks.jsonl'), 'utf8').split('\n');
    demo = lines.slice(0, 3).map((line) => JSON.parse(line) as Record<string, unknown>);
  });
  after(async () => {
    await (await started)?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    opened: async () => {
      const running = await servers();
      return { servers: running, agent: running.stack.names.agent };
    },
    task: (i, fields = {}) => {
      const { task_id: taskId, ...rest } = demo[i]!;
      return { task_id: taskId, ...fields, ...rest };
    },
    caseRows: (name, rows) => {
      const caseDir = path.join(dir!, name);
      mkdirSync(caseDir);
      const rowsFile = path.join(caseDir, 'tasks.jsonl');
      writeFileSync(rowsFile, rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      return { caseDir, rowsFile };
    },
  };
}
