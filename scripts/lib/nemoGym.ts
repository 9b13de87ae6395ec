import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ephemeralPortRange, freePort, freePortInRange } from './net';
import { repoRoot } from '../../bin/built';

// NeMo Gym (0.4.0, or 0.7.0, the release users install) as the real counterpart of our servers and
// files: where its venv is, the environment its `ng_*` commands need here, and `ng_run` as a managed
// process on free ports.

export type NemoGymVersion = '0.4.0' | '0.7.0';

export interface NemoGymInstall {
  version: NemoGymVersion;
  binDir: string;
  /** Where NeMo Gym's own server folders and their configs live (`resources_servers/...`). */
  sitePackages: string;
  /** Environment for every `ng_*` command (see nemoGymEnv). */
  env: NodeJS.ProcessEnv;
}

/** Provisions (first call only: ~4 min) and locates the venv of scripts/ensure-nemo-gym.sh. */
export function ensureNemoGym(version: NemoGymVersion = '0.4.0'): NemoGymInstall {
  const binDir = execFileSync('bash', [path.join(repoRoot, 'scripts/ensure-nemo-gym.sh'), version], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const python = version === '0.4.0' ? 'python3.12' : 'python3.13';
  const install = {
    version,
    binDir,
    sitePackages: path.join(binDir, `../lib/${python}/site-packages`),
    env: nemoGymEnv(binDir, process.env, python),
  };
  if (version === '0.7.0') linkServerVenvs(install);
  return install;
}

/**
 * `ng_run` builds one uv venv per server with the Python version it runs on. uv refuses an
 * interpreter inside a venv ("system interpreter required") and may not download one here, so the
 * real interpreter behind the venv's python3.12 goes on PATH right after the venv's own bin dir.
 */
export function nemoGymEnv(
  binDir: string,
  base: NodeJS.ProcessEnv = process.env,
  python = 'python3.12',
): NodeJS.ProcessEnv {
  const systemPython = path.dirname(realpathSync(path.join(binDir, python)));
  return { ...base, PATH: [binDir, systemPython, base.PATH ?? ''].join(':'), UV_PYTHON_DOWNLOADS: 'never' };
}

const serverVenvsDir = (install: NemoGymInstall) =>
  path.join(path.dirname(path.dirname(install.binDir)), `nemo-gym-${install.version}-server-venvs`);

/** Per-server venvs and uv's cache live beside the NeMo Gym venv, so every run after the first reuses them. */
function serverVenvOverrides(install: NemoGymInstall): string[] {
  return [
    `+uv_venv_dir=${serverVenvsDir(install)}`,
    `+uv_cache_dir=${path.join(path.dirname(serverVenvsDir(install)), 'nemo-gym-uv-cache')}`,
    '+skip_venv_if_present=true',
  ];
}

const SERVER_TYPES = ['responses_api_agents', 'resources_servers', 'responses_api_models', 'environment_servers'];

/**
 * 0.7.0's `ng_run` builds each server's venv with uv, which its venv does not carry, by installing
 * nemo-gym 0.7.0 from the package index into the server's Python, which 0.7.0's Requires-Python
 * (>= 3.13.14) rules out here. Every server folder of the 0.7.0 wheel requires only `nemo-gym[dev]`
 * (the extra being test and lint tools), which the 0.7.0 venv is: so each server's venv is that venv,
 * linked where `skip_venv_if_present` finds it (`<uv_venv_dir>/<type>/<name>/.venv`).
 */
function linkServerVenvs(install: NemoGymInstall): void {
  const venv = path.dirname(install.binDir);
  for (const type of SERVER_TYPES)
    for (const server of readdirSync(path.join(install.sitePackages, type), { withFileTypes: true })) {
      if (!server.isDirectory() || server.name.startsWith('_')) continue;
      const dir = path.join(serverVenvsDir(install), type, server.name);
      mkdirSync(dir, { recursive: true });
      try {
        symlinkSync(venv, path.join(dir, '.venv'));
      } catch (err) {
        // Linked by an earlier run, or by another process meanwhile.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
}

export interface NgRunOptions {
  configPaths: string[];
  /** The head server's port; NeMo Gym's default 11000 would collide between runs. */
  headPort: number;
  /** Further Hydra overrides, e.g. `+policy_base_url=...`. */
  overrides?: string[];
}

/** argv (after the executable) of `ng_run` serving `configPaths` with its head server on `headPort`. */
export function ngRunArgs(install: NemoGymInstall, opts: NgRunOptions): string[] {
  return [
    `+config_paths=[${opts.configPaths.join(',')}]`,
    `+head_server={host:127.0.0.1,port:${opts.headPort}}`,
    ...serverVenvOverrides(install),
    ...(opts.overrides ?? []),
  ];
}

/**
 * The whole `ng_run` invocation as one argv that needs no environment of its own (`env VAR=...`),
 * as `servers.command` of a `spawn` pipeline config wants it.
 */
export function ngRunCommand(install: NemoGymInstall, opts: NgRunOptions): string[] {
  return [
    'env',
    `PATH=${install.env.PATH}`,
    'UV_PYTHON_DOWNLOADS=never',
    path.join(install.binDir, 'ng_run'),
    ...ngRunArgs(install, opts),
  ];
}

export interface RunningNgRun {
  headUrl: string;
  logFile: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const READY = /All (\d+) \/ \1 servers ready!/;

/** NeMo Gym's own servers get random ports from here (global_config.py port_range_low/high defaults). */
const NEMO_GYM_SERVER_PORTS = { low: 10_001, high: 20_000 };

/**
 * A port for ng_run's head server. ng_run starts Ray before its head server binds, and Ray's thirty
 * or so listeners bind port 0 meanwhile; one of them taking the head's port leaves ng_run with its
 * servers up, printing "Head server is not up yet" until it is killed. So the port comes from between
 * NeMo Gym's server range and the kernel's ephemeral range, where nothing is handed out on its own.
 */
export function ngRunHeadPort(): Promise<number> {
  const low = NEMO_GYM_SERVER_PORTS.high + 1;
  const high = ephemeralPortRange().low - 1;
  return high > low ? freePortInRange(low, high) : freePort();
}

/** uvicorn's line when ng_run's head server could not bind its port. */
function headBindFailed(log: string, headPort: number): boolean {
  return log.includes(`error while attempting to bind on address ('127.0.0.1', ${headPort})`);
}

/** Starts `ng_run` in its own process group (it forks Ray and one process per server) and waits until every server answers. */
export async function startNgRun(
  install: NemoGymInstall,
  opts: NgRunOptions & { cwd: string; logFile: string; readyTimeoutMs?: number },
): Promise<RunningNgRun> {
  const logFd = openSync(opts.logFile, 'a');
  const child = spawn(path.join(install.binDir, 'ng_run'), ngRunArgs(install, opts), {
    cwd: opts.cwd,
    env: install.env,
    detached: true,
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = () => stopProcessGroup(child, exited);
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 600_000);
  for (;;) {
    const log = readFileSync(opts.logFile, 'utf8');
    if (READY.test(log)) break;
    if (headBindFailed(log, opts.headPort)) {
      await stop();
      throw new Error(
        `ng_run's head server could not bind port ${opts.headPort} (another process holds it); last output:\n${log.slice(-3000)}`,
      );
    }
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(
        `ng_run did not get ready (${child.exitCode ?? child.signalCode ?? 'timeout'}); last output:\n${log.slice(-3000)}`,
      );
    }
    await sleep(1000);
  }
  return { headUrl: `http://127.0.0.1:${opts.headPort}`, logFile: opts.logFile, child, stop };
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** Processes of the session `sid` (field 6 of /proc/<pid>/stat, after the parenthesised name). */
export function sessionMembers(sid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) === sid) members.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return members;
}

/**
 * SIGTERM to the group (ng_run then stops Ray and its servers), then SIGKILL to whatever is left of
 * the session it leads: Ray's workers move to process groups of their own, and a server may outlive
 * ng_run's own shutdown.
 */
export async function stopProcessGroup(child: ChildProcess, exited: Promise<void>): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  kill(-pid, 'SIGTERM');
  // Unreferenced, so a pending grace timer does not hold the caller's process open for 30 s after ng_run is gone.
  await Promise.race([exited, sleep(30_000, undefined, { ref: false })]);
  for (const member of sessionMembers(pid)) kill(member, 'SIGKILL');
  kill(-pid, 'SIGKILL');
  await exited;
}

/** Runs an `ng_*` command to completion; resolves with its exit code and output. */
export function runNemoGymCommand(
  install: NemoGymInstall,
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(install.binDir, command), args, {
      cwd,
      env: install.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
