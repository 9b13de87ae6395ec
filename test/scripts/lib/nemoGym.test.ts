import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ensureNemoGym, ngRunHeadPort, sessionMembers, startNgRun } from '../../../scripts/lib/nemoGym';
import { ephemeralPortRange } from '../../../scripts/lib/net';

// The real ng_run, when the port chosen for its head server is taken before it binds (as one of
// Ray's listeners can take a kernel-assigned port): without a check it sits, servers up, printing
// "Head server is not up yet" until the ready timeout. And 0.7.0's ng_run, which cannot build its
// servers' venvs here, running them from the ones ensureNemoGym('0.7.0') links.

function processesWith(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test('ngRunHeadPort lies above NeMo Gym server ports and below the kernel-assigned ones', async () => {
  const port = await ngRunHeadPort();
  assert.ok(port > 20_000 && port < ephemeralPortRange().low, String(port));
});

test(
  'startNgRun fails at once, naming the port, when its head port is taken, and leaves no ng_run behind',
  { timeout: 300_000 },
  async () => {
    const install = ensureNemoGym();
    const holder = net.createServer((socket) => socket.destroy());
    const headPort = await ngRunHeadPort();
    await new Promise<void>((resolve) => holder.listen(headPort, '127.0.0.1', resolve));
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-ng-run-'));
    const started = Date.now();
    try {
      await assert.rejects(
        startNgRun(install, {
          configPaths: [
            'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
            'responses_api_models/openai_model/configs/openai_model.yaml',
          ],
          headPort,
          overrides: ['+policy_base_url=http://127.0.0.1:9/v1', '+policy_api_key=unused', '+policy_model_name=unused'],
          cwd,
          logFile: path.join(cwd, 'ng_run.log'),
        }),
        new RegExp(`ng_run's head server could not bind port ${headPort} \\(another process holds it\\)`),
      );
      assert.ok(Date.now() - started < 240_000, `failed after ${Date.now() - started} ms, not the 600 s ready timeout`);
      assert.deepEqual(processesWith(`port:${headPort}}`), [], 'ng_run is stopped');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
      rmSync(cwd, { recursive: true, force: true });
    }
  },
);

/** `<type>/<name>` → the venv dir of each NeMo Gym server process (`<venv>/bin/python app.py`) in a session. */
function serverVenvs(sid: number): Map<string, string> {
  const venvs = new Map<string, string>();
  for (const pid of sessionMembers(sid)) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const match = /\/([a-z_]+\/[a-z0-9_]+)\/\.venv\/bin\/python$/.exec(argv[0] ?? '');
    if (match && argv[1] === 'app.py') venvs.set(match[1]!, path.dirname(path.dirname(argv[0]!)));
  }
  return venvs;
}

test(
  "ng_run 0.7.0 runs every server, the environment server it generates too, in the 0.7.0 venv linked as the server's venv",
  { timeout: 300_000 },
  async () => {
    const install = ensureNemoGym('0.7.0');
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-ng-run-070-'));
    const ngRun = await startNgRun(install, {
      configPaths: [
        'resources_servers/single_step_tool_use_with_argument_comparison/configs/single_step_tool_use_with_argument_comparison.yaml',
        'responses_api_models/openai_model/configs/openai_model.yaml',
      ],
      headPort: await ngRunHeadPort(),
      overrides: ['+policy_base_url=http://127.0.0.1:9/v1', '+policy_api_key=unused', '+policy_model_name=unused'],
      cwd,
      logFile: path.join(cwd, 'ng_run.log'),
    });
    try {
      const venvs = serverVenvs(ngRun.child.pid!);
      assert.deepEqual([...venvs.keys()].sort(), [
        'environment_servers/legacy_agent',
        'resources_servers/single_step_tool_use_with_argument_comparison',
        'responses_api_agents/tool_simulation_agent',
        'responses_api_models/openai_model',
      ]);
      for (const venv of venvs.values()) assert.equal(realpathSync(venv), realpathSync(path.dirname(install.binDir)));
    } finally {
      await ngRun.stop();
      rmSync(cwd, { recursive: true, force: true });
    }
  },
);
