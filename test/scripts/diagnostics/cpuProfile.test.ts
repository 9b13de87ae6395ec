import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { summarizeThread } from '../../../scripts/diagnostics/cpuProfileSummary';
import { readCpuProfile } from '../../../scripts/diagnostics/v8CpuProfile';

const hook = path.resolve(__dirname, '../../../scripts/diagnostics/cpuProfile.cjs');

/** Runs `script` under the preload with `env`; resolves to the child's pid once it exited 0. */
async function runProfiled(script: string, env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, NODE_OPTIONS: `--require ${hook}`, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  return child.pid!;
}

test('in a marked window the preload profiles only between <dir>/start and <dir>/stop, once per thread', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cpu-profile-marked-'));
  try {
    // The process marks its own window, as the peer bench marks its profiled round.
    const script = `
      const { writeFileSync } = require('node:fs');
      const path = require('node:path');
      const dir = process.env.PIVOT_MINER_CPU_PROFILE_DIR;
      function spin(ms) { const t = Date.now() + ms; let x = 0; while (Date.now() < t) x++; return x; }
      function beforeTheWindow() { return spin(600); }
      function insideTheWindow() { return spin(800); }
      beforeTheWindow();
      writeFileSync(path.join(dir, 'start'), '');
      setTimeout(() => {
        insideTheWindow();
        writeFileSync(path.join(dir, 'stop'), '');
        setTimeout(() => process.exit(0), 400);
      }, 200);`;
    const pid = await runProfiled(script, {
      PIVOT_MINER_CPU_PROFILE_DIR: dir,
      PIVOT_MINER_CPU_PROFILE_WINDOW: 'marked',
    });
    const profiles = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
    assert.deepEqual(profiles, [`worker-${pid}-t0.cpuprofile`]);
    const summary = summarizeThread(`${pid}-t0`, [readCpuProfile(path.join(dir, profiles[0]!))]);
    assert.match(summary.functions[0]?.name ?? '', /^insideTheWindow /);
    assert.ok(!summary.functions.some((f) => f.name.startsWith('beforeTheWindow ')), 'sampled before the window');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown window is refused at start, naming the variable', async () => {
  const child = spawn(process.execPath, ['-e', '0'], {
    env: {
      ...process.env,
      NODE_OPTIONS: `--require ${hook}`,
      PIVOT_MINER_CPU_PROFILE_DIR: os.tmpdir(),
      PIVOT_MINER_CPU_PROFILE_WINDOW: 'rounds',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.notEqual(code, 0);
  assert.match(stderr, /PIVOT_MINER_CPU_PROFILE_WINDOW is "rounds"; expected slices or marked/);
});
