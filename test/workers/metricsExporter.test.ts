import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { freePort } from '../../scripts/lib/net';
import { METRICS_ADDRESS_ENV } from '../../workers/metrics';
import { listeningPorts, metricsWorkersForFile, scrapeWhenPolling } from './metricsSetup';

// Whether a worker process exports metrics at all: turned on by the environment, off by default, and
// a port it cannot bind stops it.

const workers = metricsWorkersForFile();

test(
  `${METRICS_ADDRESS_ENV} turns metrics on; without it nothing listens; a taken port stops the worker`,
  { timeout: 180_000 },
  async () => {
    const [envPort, takenPort] = [await freePort(), await freePort()];
    const blocker: Server = await new Promise((resolve) => {
      const server = createServer().listen(takenPort, '127.0.0.1', () => resolve(server));
    });
    try {
      const viaEnv = workers.start('q-metrics-env', [], { [METRICS_ADDRESS_ENV]: `127.0.0.1:${envPort}` });
      const off = workers.start('q-metrics-off', []);
      const clash = workers.start('q-metrics-clash', ['--metrics-port', String(takenPort)]);

      const samples = await scrapeWhenPolling(`127.0.0.1:${envPort}`, 'q-metrics-env', viaEnv);
      assert.ok(samples.some((s) => s.name.startsWith('temporal_')));
      assert.deepEqual(listeningPorts(viaEnv.child.pid ?? -1), [envPort]);

      const deadline = Date.now() + 90_000;
      while (!/state: 'RUNNING'/.test(off.output())) {
        if (off.child.exitCode !== null || Date.now() > deadline)
          assert.fail(`worker without metrics did not start:\n${off.output()}`);
        await sleep(500);
      }
      assert.deepEqual(listeningPorts(off.child.pid ?? -1), []);
      assert.doesNotMatch(off.output(), /Prometheus metrics/);

      assert.notEqual(await clash.exited, 0);
      assert.match(clash.output(), /Address already in use/);
    } finally {
      blocker.close();
    }
  },
);
