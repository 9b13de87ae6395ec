import {
  JSON_DUMPED_WORDS,
  NUMBER_OF_EXAMPLES,
  NUMBER_OF_TOOLS,
  NUMBER_OF_TURNS,
  type DatasetMetrics,
  type NumericSummary,
} from '../datasetMetrics';
import { actionMixTable, funnelSum, splitTable } from './selectionTables';
import { escapeHtml, horizontalBarChart, verticalBarChart, type Bar } from './svg';
import { SELECTION_OUTCOMES } from '../selection';
import type { OutcomeCounts, SelectionMetrics } from '../selectionMetrics';
import type { RolloutAccounting } from '../rolloutAccounting';
import type { StageHealth } from '../health/stageHealth';
import { HEALTH_NOTE, healthBody } from './health';

// One self-contained HTML page per published dataset: where the pivots came from, why the others
// were dropped, and what the published set looks like. Deterministic (no dates, no randomness), so
// two runs on the same inputs produce the same bytes.

export interface ReportData {
  datasetName: string;
  agentName: string;
  /** Set when the policy that was profiled is a simulator, never a real model; shown as a banner. */
  simulatorLabel: string | null;
  /** The real model whose samples gave the local pass rates; named under the title instead of a banner. */
  policy?: ReportPolicy | null;
  selection: SelectionMetrics;
  datasetMetrics: DatasetMetrics | null;
  /** Where each rollout stage's expected rollouts went; the section is left out when absent. */
  accounting?: Record<string, RolloutAccounting> | null;
  /** What 0.7.0's health checks found per rollout stage; the section is left out when absent. */
  health?: Record<string, StageHealth> | null;
  /** The run's engine timeline drawing (a path relative to the report); the section is left out when absent. */
  engineTimelineSrc?: string | null;
  files: Record<string, string>;
}

export interface ReportPolicy {
  /** As requests name it, e.g. `gemma-3-270m-q4_k_m` or `Qwen/Qwen3-30B-A3B`. */
  model: string;
  api: 'responses' | 'chat_completions';
  /** The pivots were cut from rollouts of the simulator (embedded collect) even though a real model profiled them. */
  sourceRolloutsSimulated: boolean;
}

const COLORS = {
  published: '#2e7d32',
  dropped: '#9e9e9e',
  all_pass: '#1565c0',
  all_fail: '#c62828',
  constant: '#6a1b9a',
  incomplete: '#ef6c00',
  over_ceiling: '#00838f',
  over_budget: '#f9a825',
  over_share: '#ad1457',
  stage: '#455a64',
  skipped: '#8d6e63',
} as const;

const OUTCOME_LABELS: Record<(typeof SELECTION_OUTCOMES)[number], string> = {
  mixed: 'published (mixed reward)',
  all_pass: 'all-pass',
  all_fail: 'all-fail',
  constant: 'constant reward',
  incomplete: 'incomplete',
  over_ceiling: 'at or over the pass-rate ceiling',
  over_budget: 'over budget',
  over_share: 'over its action-kind share',
};

const MAX_TOOL_BARS = 25;

function funnelBars(s: SelectionMetrics): Bar[] {
  const c = s.counts;
  const u = s.upstream;
  const stages: [string, number | null, string][] = [
    ['tasks', u.tasks, COLORS.stage],
    ['rollouts', u.rollouts, COLORS.stage],
    ['positive trajectories', u.positive_trajectories, COLORS.stage],
    ['decision points', u.decision_points ?? c.candidates + c.skipped + (u.deduped ?? 0), COLORS.stage],
    ['skipped', c.skipped, COLORS.skipped],
    ['duplicates (dropped)', u.deduped, COLORS.skipped],
    ['candidates', c.candidates, COLORS.stage],
    ['all-pass (dropped)', c.all_pass, COLORS.all_pass],
    ['all-fail (dropped)', c.all_fail, COLORS.all_fail],
    ['constant (dropped)', c.constant, COLORS.constant],
    ['incomplete (dropped)', c.incomplete, COLORS.incomplete],
    ['mixed', c.mixed, COLORS.stage],
    ['over pass-rate ceiling (dropped)', c.over_ceiling, COLORS.over_ceiling],
    ['over budget (dropped)', c.over_budget, COLORS.over_budget],
    ['over action share (dropped)', c.over_share, COLORS.over_share],
    ['published', c.published, COLORS.published],
  ];
  return stages
    .filter(([name, count]) => count !== null && (count > 0 || !name.includes('dropped')))
    .map(([label, count, color]) => ({ label, segments: [{ name: label, value: count ?? 0, color }] }));
}

function outcomeSegments(counts: OutcomeCounts): Bar['segments'] {
  return SELECTION_OUTCOMES.map((o) => ({
    name: OUTCOME_LABELS[o],
    value: counts[o],
    color: o === 'mixed' ? COLORS.published : COLORS[o],
  }));
}

function groupBars(groups: Record<string, OutcomeCounts>, limit = Infinity): Bar[] {
  return Object.entries(groups)
    .slice(0, limit)
    .map(([label, counts]) => ({
      label,
      segments: outcomeSegments(counts),
      note: `${counts.published}/${counts.candidates}`,
    }));
}

function passRateBars(s: SelectionMetrics): Bar[] {
  return s.local_pass_rate_histogram.map((bin, i, all) => ({
    label: `${bin.lower.toFixed(1)}–${bin.upper.toFixed(1)}${i === all.length - 1 ? ']' : ')'}`,
    segments: [
      { name: 'published', value: bin.published, color: COLORS.published },
      { name: 'dropped', value: bin.dropped, color: COLORS.dropped },
    ],
  }));
}

function skipBars(s: SelectionMetrics): Bar[] {
  return Object.entries(s.skipped_by_reason).map(([reason, { count, percent }]) => ({
    label: reason,
    segments: [{ name: reason, value: count, color: COLORS.skipped }],
    note: `${count} (${percent}%)`,
  }));
}

function outcomeTable(s: SelectionMetrics): string {
  const rows = SELECTION_OUTCOMES.map(
    (o) =>
      `<tr><td><span class="swatch" style="background:${o === 'mixed' ? COLORS.published : COLORS[o]}"></span>${escapeHtml(OUTCOME_LABELS[o])}</td><td class="num">${s.outcomes[o].count}</td><td class="num">${s.outcomes[o].percent}%</td></tr>`,
  );
  return `<table><thead><tr><th>outcome</th><th>candidates</th><th>% of candidates</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function metricsTable(m: DatasetMetrics | null): string {
  if (!m) return '<p>No dataset metrics.</p>';
  const rows = [NUMBER_OF_TOOLS, JSON_DUMPED_WORDS, NUMBER_OF_TURNS].map((key) => {
    const v = m[key] as NumericSummary;
    return `<tr><td>${escapeHtml(key)}</td><td class="num">${v['Total # non-null values']}</td><td class="num">${v.Average}</td><td class="num">${v.Min}</td><td class="num">${v.Max}</td><td class="num">${v['Standard deviation']}</td></tr>`;
  });
  return `<p>${m[NUMBER_OF_EXAMPLES]} published examples (NeMo Gym <code>ng_prepare_data</code> metrics).</p><table><thead><tr><th>metric</th><th>non-null</th><th>average</th><th>min</th><th>max</th><th>std</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function accountingTable(accounting: Record<string, RolloutAccounting>): string {
  const stages = Object.entries(accounting);
  const classes = [...new Set(stages.flatMap(([, a]) => Object.keys(a.failed_by_class)))].sort();
  const header = [
    'stage',
    'expected',
    'succeeded',
    'failed',
    ...classes.map((c) => `failed: ${c}`),
    'of failed: terminal',
    'omitted',
    'recovered after a failure',
  ];
  const rows = stages.map(([stage, a]) => {
    const cells = [
      a.expected,
      a.succeeded,
      a.failed,
      ...classes.map((c) => a.failed_by_class[c] ?? 0),
      a.terminal,
      a.omitted,
      a.recovered,
    ];
    return `<tr><td>${escapeHtml(stage)}</td>${cells.map((n) => `<td class="num">${n}</td>`).join('')}</tr>`;
  });
  return `<table id="rollout-accounting"><thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function section(title: string, body: string, note?: string): string {
  return `<section><h2>${escapeHtml(title)}</h2>${note ? `<p class="note">${escapeHtml(note)}</p>` : ''}${body}</section>`;
}

const STYLE = `body{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;margin:24px;color:#212121;background:#fff;max-width:1100px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e0e0e0;padding-bottom:4px}
.sub{color:#616161;margin:0 0 12px}.note{color:#616161;font-size:13px;margin:4px 0 8px}
.policy{background:#f1f8e9;border:1px solid #c5e1a5;padding:8px 14px;margin:12px 0}
.banner{background:#fff3cd;border:2px solid #f9a825;color:#5d4037;padding:10px 14px;font-weight:bold;margin:12px 0}
table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #e0e0e0;padding:4px 10px;text-align:left}td.num{text-align:right}
.swatch{display:inline-block;width:10px;height:10px;margin-right:6px}
svg text{font-family:inherit}svg .label{font-size:12px;fill:#212121}svg .value{font-size:11px;fill:#424242}
.legend{font-size:12px;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 14px}.legend i{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}svg .grid{stroke:#eeeeee}svg .axis{stroke:#9e9e9e}
.kpis{display:flex;gap:16px;margin:12px 0}.kpi{border:1px solid #e0e0e0;padding:8px 14px}.kpi b{display:block;font-size:22px}`;

function policyLine(p: ReportPolicy): string {
  const api = p.api === 'responses' ? '/v1/responses' : '/v1/chat/completions';
  const source = p.sourceRolloutsSimulated
    ? ' The source rollouts the pivots were cut from came from the seeded policy simulator.'
    : '';
  return `<p class="policy" id="policy-model">Local pass rates: samples of the real model <b>${escapeHtml(p.model)}</b> (${api}), each scored by the verifier.${escapeHtml(source)}</p>`;
}

/**
 * Linked, not embedded: the drawing holds wall-clock times, and the report is part of the dataset,
 * whose bytes a seed fixes. It lives beside the run, so the link works where the run is kept.
 */
function engineTimelineSection(src: string): string {
  return section(
    'Engine timeline',
    `<img id="engine-timeline" src="${escapeHtml(src)}" alt="requests in flight to each server over the run (${escapeHtml(src)})">`,
    "Requests the workers had in flight to each server over the run, from every completed chunk attempt (early local profiling included). A flat top at the engine's slots is a busy engine; a dip is time the engine paid for and did not use.",
  );
}

export function renderReport(data: ReportData): string {
  const s = data.selection;
  const banner = data.simulatorLabel
    ? `<div class="banner" id="simulator-banner">SIMULATED POLICY — local pass rates come from ${escapeHtml(data.simulatorLabel)}, not from a real model.</div>`
    : '';
  const policy = data.policy && !data.simulatorLabel ? policyLine(data.policy) : '';
  const budget = s.options.max_pivots === null ? 'no budget' : `budget ${s.options.max_pivots} pivots`;
  const ceiling = s.options.max_pass_rate === null ? '' : ` · pass rate below ${s.options.max_pass_rate}`;
  const split = s.options.validation_fraction === null ? '' : ` · validation fraction ${s.options.validation_fraction}`;
  const kpis = [
    ['candidates', s.counts.candidates],
    ['published', s.counts.published],
    ['kept', `${s.kept.percent}%`],
    ['skipped decision points', s.counts.skipped],
  ]
    .map(([k, v]) => `<div class="kpi"><b>${escapeHtml(String(v))}</b>${escapeHtml(String(k))}</div>`)
    .join('');
  const files = Object.values(data.files)
    .map((f) => `<code>${escapeHtml(f)}</code>`)
    .join(', ');
  const body = [
    `<h1>Pivot dataset: ${escapeHtml(data.datasetName)}</h1>`,
    `<p class="sub">agent <code>${escapeHtml(data.agentName)}</code> · ${escapeHtml(budget + ceiling + split)} · partial profiles ${s.options.allow_partial ? 'allowed' : 'not allowed'} · files: ${files}</p>`,
    banner,
    policy,
    `<div class="kpis">${kpis}</div>`,
    section(
      'Funnel',
      horizontalBarChart(funnelBars(s)) + funnelSum(s),
      'Counts per pipeline stage; stages unknown to this run are left out.',
    ),
    ...(data.accounting && Object.keys(data.accounting).length > 0
      ? [
          section(
            'Rollout accounting',
            accountingTable(data.accounting),
            'Every expected rollout is succeeded, failed or omitted. Failed and omitted rollouts never enter a pass rate; a pivot with fewer local samples than asked for is held back as incomplete unless partial profiles are allowed.',
          ),
        ]
      : []),
    ...(data.health && Object.keys(data.health).length > 0
      ? [section('Rollout health', healthBody(data.health), HEALTH_NOTE)]
      : []),
    section('Selection outcomes', outcomeTable(s)),
    section(
      'Splits and action mix',
      splitTable(s) + actionMixTable(s),
      'Whole source trajectories go to one side of the split. Mixed pivots are kept below the pass-rate ceiling, then by the budget, then by the action mix (easiest dropped first).',
    ),
    section(
      'Local pass rates',
      verticalBarChart(passRateBars(s)),
      'Mean local reward of each profiled candidate. PivotRL keeps only mixed pivots: all-0 and all-1 carry no learning signal.',
    ),
    section(
      'Tool names',
      horizontalBarChart(groupBars(s.by_tool_name, MAX_TOOL_BARS)),
      'Published/candidates per expected tool (top 25).',
    ),
    section('Depth', verticalBarChart(groupBars(s.by_depth_bucket)), 'Published/candidates per pivot depth bucket.'),
    section('Action types', horizontalBarChart(groupBars(s.by_action_type))),
    section(
      'Skip reasons',
      Object.keys(s.skipped_by_reason).length > 0
        ? horizontalBarChart(skipBars(s), { labelWidth: 280 })
        : '<p>No skipped decision points.</p>',
    ),
    section('Published dataset', metricsTable(data.datasetMetrics)),
    ...(data.engineTimelineSrc ? [engineTimelineSection(data.engineTimelineSrc)] : []),
  ].join('\n');
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Pivot dataset ${escapeHtml(data.datasetName)}</title>\n<style>${STYLE}</style>\n</head>\n<body>\n${body}\n</body>\n</html>\n`;
}
