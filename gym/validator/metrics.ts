// The metrics block the reference validator prints on success, accumulated one row at a time so
// memory does not grow with the file (only with the number of distinct agent and tool names).
import { compareCodePoints } from '../pythonJsonLexis';
import type { RowSummary } from './rowChecks';

/** Python's `f"{x:.2f}"`: correctly rounded from the exact binary value, exact ties to even.
 * toFixed breaks exact ties upward; an exact tie at two decimals needs x*8 odd (x = k + n/8). */
export function formatTwoDecimals(value: number): string {
  const eighths = value * 8;
  if (Number.isInteger(eighths) && eighths % 2 !== 0) {
    const hundredths = value * 100;
    const floor = Math.floor(hundredths);
    const even = floor % 2 === 0 ? floor : floor + 1;
    return (even / 100).toFixed(2);
  }
  return value.toFixed(2);
}

function sortedCounts(counts: Map<string, number>): [string, number][] {
  return [...counts].sort(([nameA, countA], [nameB, countB]) => countB - countA || compareCodePoints(nameA, nameB));
}

/** What the metrics block counts, as plain data: a thread counts the rows it accepted and the
 * caller adds the counts up (the block does not depend on the order rows were counted in). */
export interface MetricsCounts {
  rows: number;
  agents: Map<string, number>;
  tools: Map<string, number>;
  functionCalls: number;
  messages: number;
  /** function_call_batch rows (only with batch actions allowed); their line is printed only when > 0. */
  batches: number;
  inputItems: number;
  toolEntries: number;
}

const addCount = (counts: Map<string, number>, name: string, count: number) =>
  counts.set(name, (counts.get(name) ?? 0) + count);

export class PivotMetrics {
  readonly counts: MetricsCounts = {
    rows: 0,
    agents: new Map(),
    tools: new Map(),
    functionCalls: 0,
    messages: 0,
    batches: 0,
    inputItems: 0,
    toolEntries: 0,
  };

  get rowCount(): number {
    return this.counts.rows;
  }

  add(summary: RowSummary): void {
    const counts = this.counts;
    counts.rows++;
    addCount(counts.agents, summary.agentName, 1);
    if (summary.toolName !== undefined) addCount(counts.tools, summary.toolName, 1);
    for (const name of summary.batchToolNames ?? []) addCount(counts.tools, name, 1);
    if (summary.actionType === 'function_call') counts.functionCalls++;
    else if (summary.actionType === 'function_call_batch') counts.batches++;
    else counts.messages++;
    counts.inputItems += summary.inputItems;
    counts.toolEntries += summary.tools;
  }

  merge(other: MetricsCounts): void {
    const counts = this.counts;
    counts.rows += other.rows;
    for (const [name, count] of other.agents) addCount(counts.agents, name, count);
    for (const [name, count] of other.tools) addCount(counts.tools, name, count);
    counts.functionCalls += other.functionCalls;
    counts.messages += other.messages;
    counts.batches += other.batches;
    counts.inputItems += other.inputItems;
    counts.toolEntries += other.toolEntries;
  }

  /** Only meaningful once at least one row was added. */
  render(): string {
    const { rows, agents, tools, functionCalls, messages, batches, inputItems, toolEntries } = this.counts;
    const lines = [`rows: ${rows}`];
    for (const [title, counts] of [
      ['agent_ref', agents],
      ['expected_tool', tools],
    ] as const) {
      if (counts.size === 0) continue;
      lines.push(`${title}:`);
      for (const [name, count] of sortedCounts(counts)) lines.push(`  ${name}: ${count}`);
    }
    const percent = (count: number) => `${formatTwoDecimals((count / rows) * 100)}%`;
    lines.push(
      'expected_action_split:',
      `  function_call: ${functionCalls} (${percent(functionCalls)})`,
      `  message: ${messages} (${percent(messages)})`,
      ...(batches > 0 ? [`  function_call_batch: ${batches} (${percent(batches)})`] : []),
      `avg_input_items: ${formatTwoDecimals(inputItems / rows)}`,
      `avg_tools: ${formatTwoDecimals(toolEntries / rows)}`,
    );
    return lines.map((line) => line + '\n').join('');
  }
}
