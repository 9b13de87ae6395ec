import { escapeHtml } from './svg';
import { CHECK_IDS } from '../health/registry';
import type { StageHealth } from '../health/stageHealth';

// The report's section on NeMo Gym 0.7.0's rollout health checks: per stage, the rollouts'
// verdicts, every check's verdict and count, and the first findings of each failed check.

const cell = (text: string | number, cls = '') => `<td${cls ? ` class="${cls}"` : ''}>${escapeHtml(String(text))}</td>`;

function checksTable(stages: Array<[string, StageHealth]>): string {
  const header = ['check', ...stages.map(([stage]) => stage)].map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const rows = CHECK_IDS.map((id) => {
    const cells = stages.map(([, h]) => {
      const c = h.checks[id];
      return c
        ? cell(c.verdict === 'fail' ? `fail (${c.issues})` : c.verdict, c.verdict === 'fail' ? 'fail' : '')
        : cell('');
    });
    return `<tr>${cell(id)}${cells.join('')}</tr>`;
  });
  return `<table id="health-checks"><thead><tr>${header}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function verdictLine(stage: string, h: StageHealth): string {
  const v = h.verdicts;
  const ignored = h.ignored_checks.length > 0 ? ` Ignored: ${h.ignored_checks.join(', ')}.` : '';
  return `<p>${escapeHtml(`${stage}: ${h.records} rollouts checked: ${v.healthy} healthy, ${v.unhealthy} unhealthy, ${v.unobserved} unobserved (0.7.0's ${h.quality_summary}).${ignored}`)}</p>`;
}

function examplesList(stage: string, h: StageHealth): string {
  const items = h.failed_checks.flatMap((id) =>
    (h.examples[id] ?? []).map((e) => {
      const where = e.locator ? ` ${JSON.stringify(e.locator)}` : '';
      return `<li>${escapeHtml(`${stage} ${id}: rollout ${e.rollout_id}${where} ${JSON.stringify(e.detail)}`)}</li>`;
    }),
  );
  return items.length > 0 ? `<ul class="health-examples">${items.join('')}</ul>` : '';
}

export function healthBody(health: Record<string, StageHealth>): string {
  const stages = Object.entries(health);
  return [
    ...stages.map(([stage, h]) => verdictLine(stage, h)),
    checksTable(stages),
    ...stages.map(([stage, h]) => examplesList(stage, h)),
  ].join('');
}

export const HEALTH_NOTE =
  "NeMo Gym 0.7.0's checks on each stage's rollouts. A check fails when it finds anything, and is unobserved when no rollout holds what it reads (most read the rollout's ng_trajectory). A finding never removes a rollout.";
