import { DEFAULT_ROUTE, type NumRepeats, type RowRoute } from './agentRouting';
import { comparePython } from './rewardProfile/profile';
import { pyReprString } from './validator/pythonRepr';

// The two warnings NeMo Gym 0.7.0's ng_collect_rollouts gives once it has routed every row
// (rollout_collection.py `_preprocess_raw_rows`, warnings.warn), in its words: rows whose own
// agent_ref agent_map (or agent_name, its `_default`) replaced, and num_repeats keys no row was
// looked up by, a likely typo that would otherwise leave its agent at `_default` unnoticed.

/** What the routed rows of one materialization call for warning about, gathered a row at a time. */
export class RoutingWarnings {
  private readonly overridden = new Map<string, [string, string]>();
  private readonly seen = new Set<string>();

  constructor(private readonly numRepeats: NumRepeats) {}

  add(route: RowRoute): void {
    if (route.overridden) this.overridden.set(JSON.stringify(route.overridden), route.overridden);
    for (const key of route.repeatKeys) this.seen.add(key);
  }

  /** 0.7.0's warning texts, in the order it gives them; none when nothing calls for one. */
  messages(): string[] {
    const messages: string[] = [];
    if (this.overridden.size > 0) {
      const pairs = [...this.overridden.values()].sort(
        ([a1, b1], [a2, b2]) => comparePython(a1, a2) || comparePython(b1, b2),
      );
      const shown = pairs.map(([from, to]) => `(${pyReprString(from)}, ${pyReprString(to)})`).join(', ');
      messages.push(
        `agent_map overrode agent_ref values already present in the data: [${shown}]. Prior to this release, ` +
          '+agent_name only filled rows missing an agent_ref; it now re-routes every row.',
      );
    }
    const listed = typeof this.numRepeats === 'number' ? [] : Object.keys(this.numRepeats);
    const unknown = listed.filter((k) => k !== DEFAULT_ROUTE && !this.seen.has(k)).sort(comparePython);
    if (unknown.length > 0)
      messages.push(
        'num_repeats dict contains agent names that never appeared in input rows (possible typo?): ' +
          `[${unknown.map(pyReprString).join(', ')}]`,
      );
    return messages;
  }
}
