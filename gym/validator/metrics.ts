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

export class PivotMetrics {
  private rows = 0;
  private readonly agents = new Map<string, number>();
  private readonly tools = new Map<string, number>();
  private functionCalls = 0;
  private messages = 0;
  private inputItems = 0;
  private toolEntries = 0;

  get rowCount(): number {
    return this.rows;
  }

  add(summary: RowSummary): void {
    this.rows++;
    this.agents.set(summary.agentName, (this.agents.get(summary.agentName) ?? 0) + 1);
    if (summary.toolName !== undefined) this.tools.set(summary.toolName, (this.tools.get(summary.toolName) ?? 0) + 1);
    if (summary.actionType === 'function_call') this.functionCalls++;
    else this.messages++;
    this.inputItems += summary.inputItems;
    this.toolEntries += summary.tools;
  }

  /** Only meaningful once at least one row was added. */
  render(): string {
    const lines = [`rows: ${this.rows}`];
    for (const [title, counts] of [['agent_ref', this.agents], ['expected_tool', this.tools]] as const) {
      if (counts.size === 0) continue;
      lines.push(`${title}:`);
      for (const [name, count] of sortedCounts(counts)) lines.push(`  ${name}: ${count}`);
    }
    const percent = (count: number) => `${formatTwoDecimals((count / this.rows) * 100)}%`;
    lines.push(
      'expected_action_split:',
      `  function_call: ${this.functionCalls} (${percent(this.functionCalls)})`,
      `  message: ${this.messages} (${percent(this.messages)})`,
      `avg_input_items: ${formatTwoDecimals(this.inputItems / this.rows)}`,
      `avg_tools: ${formatTwoDecimals(this.toolEntries / this.rows)}`,
    );
    return lines.map((line) => line + '\n').join('');
  }
}
