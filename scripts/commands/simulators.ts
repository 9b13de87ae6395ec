import { InvalidArgumentError, type Command } from 'commander';
import { startEmbeddedStack } from '../../servers/embeddedStack';

const port = (v: string) => Number.parseInt(v, 10);
const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number ≥ 1');
  return n;
};

export function registerSimulatorsCommand(program: Command): void {
  program
    .command('simulators')
    .description(
      'serve the embedded stack as its own process until stopped: SEEDED POLICY SIMULATOR, agent, resources and head servers',
    )
    .option('--seed <n>', 'simulator seed', port, 7)
    .option('--head-port <n>', 'head server port (serves /global_config_dict_yaml)', port, 0)
    .option('--model-port <n>', 'policy model port', port, 0)
    .option('--agent-port <n>', 'agent port', port, 0)
    .option('--resources-port <n>', 'resources server port', port, 0)
    .option(
      '--latency-ms <n>',
      'policy model: added latency of every call, in ms (an engine-bound benchmark or a replica test)',
      port,
      0,
    )
    .option(
      '--slots <n>',
      'policy model: calls answered at once, each holding its slot for the latency; the rest wait (unset = no limit)',
      positive,
    )
    .action(
      async (opts: {
        seed: number;
        headPort: number;
        modelPort: number;
        agentPort: number;
        resourcesPort: number;
        latencyMs: number;
        slots?: number;
      }) => {
        const stack = await startEmbeddedStack({
          seed: opts.seed,
          latencyMs: opts.latencyMs,
          modelSlots: opts.slots,
          ports: { head: opts.headPort, model: opts.modelPort, agent: opts.agentPort, resources: opts.resourcesPort },
        });
        for (const [name, url] of Object.entries(stack.urls)) console.log(`${name.padEnd(10)} ${url}`);
        const stop = () => void stack.close().then(() => process.exit(0));
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      },
    );
}
