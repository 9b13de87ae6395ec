import type { FileHandle } from 'node:fs/promises';
import { onFile } from './fileError';
import { orjsonDumps } from './pythonJsonDumps';
import type { PyValue } from './pythonJson';

// `<stem>_aggregate_metrics.json` as NeMo Gym writes it (`orjson.dumps(entries, option=OPT_INDENT_2)`),
// written entry by entry and group row by group row, so a run's metrics are never one string in memory.

/** One agent's metrics, as Python values where their types are known (plain JS values otherwise). */
export interface EntryValues {
  agentMetrics: PyValue | Record<string, unknown>;
  keyMetrics: PyValue | Record<string, unknown>;
  groups: Iterable<PyValue | Record<string, unknown>> | AsyncIterable<PyValue | Record<string, unknown>>;
  /** NeMo Gym 0.7.0's entries name the environment server that answered and carry its repeat-level metrics. */
  gym070?: { environmentServer: string; repeats: Iterable<PyValue>; perfSummary?: PyValue };
}

/** orjson's indented form of a value that sits `depth` levels deep. */
function nested(value: unknown, depth: number): string {
  return orjsonDumps(value, { indent: 2, depth });
}

export class AggregateMetricsWriter {
  private entries = 0;
  private pending = '';

  constructor(
    private readonly file: FileHandle,
    private readonly path: string,
  ) {}

  private async write(text: string, force = false): Promise<void> {
    this.pending += text;
    if (force || this.pending.length >= 1 << 16) {
      const text = this.pending;
      await onFile(this.path, () => this.file.write(text));
      this.pending = '';
    }
  }

  /** Keys in the order NeMo Gym's entries have them. */
  async entry(agentName: string, values: EntryValues): Promise<void> {
    await this.write(`${this.entries++ === 0 ? '[' : ','}\n  {\n    "agent_ref": ${nested({ name: agentName }, 2)}`);
    if (values.gym070)
      await this.write(`,\n    "_ng_environment_server": ${nested(values.gym070.environmentServer, 2)}`);
    await this.write(`,\n    "agent_metrics": ${nested(values.agentMetrics, 2)}`);
    await this.write(`,\n    "key_metrics": ${nested(values.keyMetrics, 2)},\n    "group_level_metrics": `);
    await this.list(values.groups);
    if (values.gym070) {
      await this.write(',\n    "repeat_level_metrics": ');
      await this.list(values.gym070.repeats);
      if (values.gym070.perfSummary !== undefined)
        await this.write(`,\n    "perf_summary": ${nested(values.gym070.perfSummary, 2)}`);
    }
    await this.write('\n  }');
  }

  /** A list value of the entry, an item at a time. */
  private async list(items: Iterable<unknown> | AsyncIterable<unknown>): Promise<void> {
    let count = 0;
    for await (const item of items) await this.write(`${count++ === 0 ? '[' : ','}\n      ${nested(item, 3)}`);
    await this.write(count === 0 ? '[]' : '\n    ]');
  }

  async close(): Promise<void> {
    await this.write(this.entries === 0 ? '[]' : '\n]', true);
  }
}
