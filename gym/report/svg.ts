// Minimal inline-SVG bar charts for the publish report: no scripts, no external assets, so the page
// renders the same offline, in a CI screenshot, or attached to a ticket.

export interface Segment {
  name: string;
  value: number;
  color: string;
}
export interface Bar {
  label: string;
  segments: Segment[];
  /** Text printed after the bar; defaults to the bar's total. */
  note?: string;
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function total(bar: Bar): number {
  return bar.segments.reduce((sum, s) => sum + s.value, 0);
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

/** An HTML legend above the chart (it wraps, unlike SVG text); only for stacked bars with data. */
function legend(bars: readonly Bar[]): string {
  const totals = new Map<string, { color: string; value: number }>();
  for (const s of bars.flatMap((b) => b.segments)) {
    const entry = totals.get(s.name) ?? { color: s.color, value: 0 };
    entry.value += s.value;
    totals.set(s.name, entry);
  }
  if (!bars.some((b) => b.segments.length > 1)) return '';
  const items = [...totals]
    .filter(([, { value }]) => value > 0)
    .map(([name, { color }]) => `<span><i style="background:${color}"></i>${escapeHtml(name)}</span>`);
  return `<div class="legend">${items.join('')}</div>`;
}

/** Horizontal bars, one row per label: reads well with long labels (stages, tools, reasons). */
export function horizontalBarChart(bars: readonly Bar[], opts: { width?: number; labelWidth?: number } = {}): string {
  const width = opts.width ?? 760;
  const labelWidth = opts.labelWidth ?? 220;
  const rowHeight = 24;
  const top = 4;
  const plotWidth = width - labelWidth - 90;
  const max = Math.max(1, ...bars.map(total));
  const height = top + rowHeight * bars.length + 8;
  const rows = bars.map((bar, i) => {
    const y = top + i * rowHeight;
    let x = labelWidth;
    const rects = bar.segments.map((s) => {
      const w = s.value > 0 ? Math.max(1.5, (s.value / max) * plotWidth) : 0;
      const rect = `<rect x="${x.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowHeight - 8}" fill="${s.color}"><title>${escapeHtml(`${bar.label} — ${s.name}: ${fmt(s.value)}`)}</title></rect>`;
      x += w;
      return rect;
    });
    return (
      `<text x="${labelWidth - 8}" y="${y + rowHeight / 2 + 4}" text-anchor="end" class="label">${escapeHtml(bar.label)}</text>` +
      rects.join('') +
      `<text x="${(x + 6).toFixed(1)}" y="${y + rowHeight / 2 + 4}" class="value">${escapeHtml(bar.note ?? fmt(total(bar)))}</text>`
    );
  });
  return `${legend(bars)}<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">${rows.join('')}</svg>`;
}

/** Vertical bars with labels under the axis: for ordered buckets (pass-rate bins, depth). */
export function verticalBarChart(bars: readonly Bar[], opts: { width?: number; height?: number } = {}): string {
  const width = opts.width ?? 760;
  const height = opts.height ?? 260;
  const left = 48;
  const top = 22;
  const bottom = 40;
  const plotHeight = height - top - bottom;
  const slot = (width - left - 10) / Math.max(1, bars.length);
  const max = Math.max(1, ...bars.map(total));
  const ticks = [0, 0.5, 1].map((f) => {
    const y = top + plotHeight * (1 - f);
    return (
      `<line x1="${left}" x2="${width - 10}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" class="grid"/>` +
      `<text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" class="value">${fmt(Math.round(max * f * 10) / 10)}</text>`
    );
  });
  const columns = bars.map((bar, i) => {
    const x = left + i * slot + slot * 0.15;
    const w = slot * 0.7;
    let y = top + plotHeight;
    const rects = bar.segments.map((s) => {
      const h = s.value > 0 ? Math.max(1.5, (s.value / max) * plotHeight) : 0;
      y -= h;
      return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${escapeHtml(`${bar.label} — ${s.name}: ${fmt(s.value)}`)}</title></rect>`;
    });
    const cx = (x + w / 2).toFixed(1);
    return (
      rects.join('') +
      `<text x="${cx}" y="${(y - 4).toFixed(1)}" text-anchor="middle" class="value">${escapeHtml(bar.note ?? fmt(total(bar)))}</text>` +
      `<text x="${cx}" y="${height - bottom + 16}" text-anchor="middle" class="label">${escapeHtml(bar.label)}</text>`
    );
  });
  const axis = `<line x1="${left}" x2="${width - 10}" y1="${top + plotHeight}" y2="${top + plotHeight}" class="axis"/>`;
  return `${legend(bars)}<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img">${ticks.join('')}${axis}${columns.join('')}</svg>`;
}
