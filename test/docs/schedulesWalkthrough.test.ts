import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { Client, Connection, ScheduleNotFoundError } from '@temporalio/client';
import { freePort } from '../../scripts/lib/net';
import { temporalBinary } from '../../scripts/lib/temporalCli';
import { fencedBlocks } from '../helpers/markdown';

// docs/schedules.md as a newcomer follows it: every ```bash block, as written and in order, run by
// bash in an empty directory holding only pivot-miner installed as node_modules/pivot-miner (this
// checkout linked there, where `npm install` of the tarball puts it). The block the page marks as
// long-running (`pivot-miner dev`: a Temporal dev server and a worker) runs in the background until
// the end. The environment only points the commands at this test's free port. Then the files they
// made are checked: two nightly versions, the second the first plus new pivots, an up-to-date run
// that published nothing, a curriculum round in the curriculum's own directory, the nightly pool
// untouched by it; and a curriculum started before the first version fails with the page's message.

const repoRoot = path.resolve(__dirname, '../..');
const page = readFileSync(path.join(repoRoot, 'docs/schedules.md'), 'utf8');
const KEEPS_RUNNING = '<!-- keeps running: the walk-through test starts it in the background -->';
const root = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-walkthrough-'));
const dir = path.join(root, 'work');
const pool = path.join(dir, 'artifacts/pools/nightly');
let background: ChildProcess | undefined;

after(async () => {
  if (background?.exitCode === null) {
    const exited = once(background, 'exit');
    process.kill(-background.pid!, 'SIGINT');
    const timer = setTimeout(() => process.kill(-background!.pid!, 'SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(root, { recursive: true, force: true });
});

/** An empty directory with the package where `npm install` puts it, `npx pivot-miner` resolving to it. */
function installInEmptyDir(): void {
  mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true });
  symlinkSync(repoRoot, path.join(dir, 'node_modules/pivot-miner'));
  symlinkSync('../pivot-miner/bin/pivot-miner', path.join(dir, 'node_modules/.bin/pivot-miner'));
}

function shell(script: string, env: NodeJS.ProcessEnv, detached = false): ChildProcess {
  return spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: dir, env, detached });
}

async function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = shell(script, env);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, out, err };
}

/** Starts the long-running block and resolves once its worker polls (`dev` says so on stderr). */
async function startInBackground(script: string, env: NodeJS.ProcessEnv): Promise<void> {
  background = shell(script, env, true);
  let err = '';
  await new Promise<void>((resolve, reject) => {
    background!.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('worker on task queue')) resolve();
    });
    background!.once('exit', (code) => reject(new Error(`the background block exited (${code}):\n${err}`)));
  });
}

/** The page's fresh-pool error, its `<dir>` placeholder for the pool directory, whitespace collapsed. */
function documentedFreshPoolError(): string {
  const quoted = /`(no initial_pool given and the pool <dir>[^`]*)`/.exec(page);
  assert.ok(quoted, 'docs/schedules.md quotes the fresh-pool error');
  return quoted[1]!.replace('<dir>', pool).replace(/\s+/g, ' ');
}

test(
  'docs/schedules.md runs as written, from an empty directory to two versions and a round',
  { timeout: 600_000 },
  async () => {
    const blocks = fencedBlocks('docs/schedules.md', page);
    const bash = blocks.filter((b) => b.lang === 'bash');
    assert.ok(bash.length >= 8, `found ${bash.length} bash blocks`);
    installInEmptyDir();
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_BIN: temporalBinary(),
    };
    env.PIVOT_MINER_DEV_PORT = String(port);
    for (const name of [
      'PIVOT_MINER_BASE_DIR',
      'PIVOT_MINER_ARTIFACTS_ROOT',
      'PIVOT_MINER_TASK_QUEUE',
      'TEMPORAL_NAMESPACE',
    ])
      delete env[name];

    const outputs: string[] = [];
    let freshPoolChecked = false;
    for (const block of bash) {
      const where = `docs/schedules.md:${block.line}`;
      if (block.before === KEEPS_RUNNING) {
        await startInBackground(block.text, env);
        outputs.push('');
        continue;
      }
      if (!freshPoolChecked && block.text.includes('schedule trigger')) {
        // Before the first version: the curriculum refuses at once, with the page's words.
        const early = await run('npx pivot-miner curriculum start -c nightly.yaml --workflow-id curriculum-early', env);
        assert.equal(early.code, 1, early.err);
        assert.ok(early.err.replace(/\s+/g, ' ').includes(documentedFreshPoolError()), early.err);
        freshPoolChecked = true;
      }
      const result = await run(block.text, env);
      assert.equal(result.code, 0, `${where} failed:\n${result.err}`);
      outputs.push(result.out);

      // A block whose command prints a command shows it in the ```text block after it.
      const next = blocks[blocks.indexOf(block) + 1];
      if (block.text.includes('--print-command')) assert.equal(result.out, `${next!.text}\n`, where);
    }
    assert.ok(freshPoolChecked);
    const all = outputs.join('\n');

    const versions = readdirSync(path.join(pool, 'versions')).filter((v) => !v.startsWith('.'));
    assert.equal(versions.length, 2, `versions: ${versions.join(', ')}`);
    const [first, second] = versions.sort();
    assert.equal(readlinkSync(path.join(pool, 'latest')), `versions/${second}`);
    const version = JSON.parse(readFileSync(path.join(pool, 'latest/version.json'), 'utf8'));
    assert.equal(version.previous_version, first);
    assert.deepEqual(
      version.sources.map((s: { path: string }) => s.path),
      ['incoming/rollouts/day-2/rollouts.jsonl'],
    );
    assert.ok(version.counts.added > 0, JSON.stringify(version.counts));
    const lines = (v: string) =>
      readFileSync(path.join(pool, 'versions', v, 'pivots.jsonl'), 'utf8')
        .trimEnd()
        .split('\n');
    assert.deepEqual(
      lines(second!).slice(0, lines(first!).length),
      lines(first!),
      'a version keeps the previous lines',
    );
    assert.equal(lines(second!).length, version.counts.pivots);
    assert.equal((all.match(/"status": "published"/g) ?? []).length, 2);
    assert.equal((all.match(/"status": "up_to_date"/g) ?? []).length, 1);

    const curriculum = path.join(pool, 'curricula/curriculum-1');
    const round = JSON.parse(readFileSync(path.join(curriculum, 'latest/version.json'), 'utf8'));
    assert.equal(round.kind, 'curriculum_round');
    assert.equal(round.poolSize, version.counts.pivots, 'the curriculum starts from the latest nightly version');
    assert.equal(round.kept + round.retiredLearned + round.retiredUnsolvable + round.dropped, round.poolSize);
    const kept = readFileSync(path.join(curriculum, 'versions/round-001/pivots.jsonl'), 'utf8').trimEnd().split('\n');
    assert.equal(kept.filter((l) => l !== '').length, round.kept);
    assert.equal(
      readlinkSync(path.join(pool, 'latest')),
      `versions/${second}`,
      'the nightly pool is not the curriculum’s',
    );
    assert.match(all, /"versionId": "round-001"/);

    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    try {
      const client = new Client({ connection });
      assert.equal((await client.workflow.getHandle('curriculum-1').describe()).status.name, 'CANCELLED');
      await assert.rejects(client.schedule.getHandle('nightly').describe(), ScheduleNotFoundError);
    } finally {
      await connection.close();
    }
  },
);
