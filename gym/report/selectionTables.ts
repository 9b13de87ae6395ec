import { ACTION_KINDS } from '../actionMix';
import type { SelectionMetrics, SplitCounts } from '../selectionMetrics';
import { escapeHtml } from './svg';

// The report's tables for the rules after the mixed test: the funnel's arithmetic, each side of
// the validation split, and the action mix before and after `max_share`.

function table(id: string, header: string[], rows: (string | number)[][]): string {
  const head = header.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map(
      ([label, ...cells]) =>
        `<tr><td>${escapeHtml(String(label))}</td>${cells.map((c) => `<td class="num">${escapeHtml(String(c))}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table id="${id}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** published + each rule's drops = candidates, written out so a reader can check it. */
export function funnelSum(s: SelectionMetrics): string {
  const c = s.counts;
  const terms: [string, number][] = [
    ['published', c.published],
    ['all-pass', c.all_pass],
    ['all-fail', c.all_fail],
    ['constant', c.constant],
    ['incomplete', c.incomplete],
    ['over ceiling', c.over_ceiling],
    ['over budget', c.over_budget],
    ['over share', c.over_share],
  ];
  const sum = terms.map(([name, n]) => `${n} ${name}`).join(' + ');
  const verdict = s.counts_add_up ? 'adds up' : 'DOES NOT ADD UP';
  return `<p id="funnel-sum">${escapeHtml(`${sum} = ${c.candidates} candidates (${verdict}).`)}</p>`;
}

function splitEntries(s: SelectionMetrics): [string, SplitCounts][] {
  return Object.entries(s.by_split).filter((e): e is [string, SplitCounts] => e[1] !== undefined);
}

export function splitTable(s: SelectionMetrics): string {
  const rows = splitEntries(s).map(([split, c]) => [
    split,
    c.candidates,
    c.published,
    c.published_trajectories,
    c.over_ceiling,
    c.over_budget,
    c.over_share,
  ]);
  return table(
    'splits',
    ['split', 'candidates', 'published', 'source trajectories', 'over ceiling', 'over budget', 'over share'],
    rows,
  );
}

export function actionMixTable(s: SelectionMetrics): string {
  const rows = splitEntries(s).flatMap(([split, c]) =>
    ACTION_KINDS.map((kind) => {
      const share = (counts: Record<string, number>) => {
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        return total === 0 ? '0' : (counts[kind]! / total).toFixed(3);
      };
      const { before, after } = c.action_mix;
      return [
        `${split}: ${kind}`,
        before[kind],
        share(before),
        after[kind],
        share(after),
        s.options.max_share?.[kind] ?? '—',
      ];
    }),
  );
  return table(
    'action-mix',
    ['split: expected action', 'before', 'share before', 'after', 'share after', 'max share'],
    rows,
  );
}
