import { startEmbeddedStack } from '../../servers/embeddedStack';

// The simulators of a bench in their own process, so the bare loop and the durable worker call the
// same servers and the worker's RSS counts only the worker. Prints its URLs as one JSON line.

async function main(): Promise<void> {
  const seed = Number(process.env.BENCH_SEED ?? '7');
  const stack = await startEmbeddedStack({ seed, latencyMs: 0 });
  process.stdout.write(`${JSON.stringify(stack.urls)}\n`);
  const stop = () => {
    // A signal handler cannot await: exit once the servers are closed, whether or not that failed.
    void stack.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
