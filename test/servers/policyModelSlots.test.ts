import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startPolicyModelServer } from '../../servers/policyModel';

// A simulator with a per-call latency and a fixed number of slots stands in for an engine whose
// throughput is its own (slots / latency), whatever the client's concurrency.

async function timeConcurrentCalls(options: { slots: number }, calls: number): Promise<number> {
  const server = await startPolicyModelServer({ seed: 3, latencyMs: 60, ...options, log: () => undefined });
  try {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        fetch(`${server.url}/v1/responses`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: `hello ${i}`, seed: i }),
        }),
      ),
    );
    assert.ok(answers.every((res) => res.status === 200));
    return performance.now() - started;
  } finally {
    await server.close();
  }
}

test('calls beyond the slots wait for one: 6 calls over 2 slots take at least 3 latencies', async () => {
  // A lower bound only: a busy host can make it slower, never faster. Unslotted, the six overlap in
  // about one latency.
  assert.ok((await timeConcurrentCalls({ slots: 2 }, 6)) >= 3 * 60 - 5);
});
