import { escapeHtml } from './svg';

// The engine timeline: for each server a run sent requests to, how many it had in flight over the
// run's time, as a standalone SVG. It is drawn from wall-clock spans, so it differs from run to run;
// the report links it from beside the run instead of embedding it, and the dataset keeps its bytes.

export interface TimelineSeries {
  /** What the requests went to, e.g. `collect → agent`. */
  label: string;
  /** Mean requests in flight in each of the timeline's equal slices. */
  inFlight: number[];
}

export interface Timeline {
  /** Seconds from the first request's start to the last one's end. */
  spanS: number;
  series: TimelineSeries[];
  /** Records that could not be read (a crashed attempt's torn file, say); left out of the chart. */
  unreadable: number;
}

const WIDTH = 900;
const LEFT = 56;
const RIGHT = 12;
const PANEL = 110;
const GAP = 34;
const AXIS = 30;
const COLORS = ['#1565c0', '#2e7d32', '#ef6c00', '#6a1b9a'];

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/** One series as a filled step area over its panel, with its peak on the y axis. */
function panel(series: TimelineSeries, index: number, top: number): string {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const peak = Math.max(1, ...series.inFlight);
  const slice = plotWidth / Math.max(1, series.inFlight.length);
  const y = (v: number) => (top + PANEL * (1 - v / peak)).toFixed(1);
  const steps = series.inFlight.map((v, i) => `H${(LEFT + i * slice).toFixed(1)}V${y(v)}`).join('');
  const area = `M${LEFT},${y(0)}${steps}H${LEFT + plotWidth}V${y(0)}Z`;
  const mean = series.inFlight.reduce((a, b) => a + b, 0) / Math.max(1, series.inFlight.length);
  return (
    `<text x="${LEFT}" y="${top - 8}" class="label">${escapeHtml(series.label)} · peak ${fmt(Math.round(peak * 10) / 10)}, mean ${fmt(Math.round(mean * 10) / 10)} in flight</text>` +
    `<line x1="${LEFT}" x2="${LEFT + plotWidth}" y1="${top}" y2="${top}" class="grid"/>` +
    `<text x="${LEFT - 6}" y="${top + 4}" text-anchor="end" class="value">${fmt(Math.round(peak * 10) / 10)}</text>` +
    `<text x="${LEFT - 6}" y="${top + PANEL + 4}" text-anchor="end" class="value">0</text>` +
    `<path d="${area}" fill="${COLORS[index % COLORS.length]}" fill-opacity="0.75"/>` +
    `<line x1="${LEFT}" x2="${LEFT + plotWidth}" y1="${top + PANEL}" y2="${top + PANEL}" class="axis"/>`
  );
}

/** Five ticks in seconds under the last panel. */
function timeAxis(spanS: number, y: number): string {
  const plotWidth = WIDTH - LEFT - RIGHT;
  return [0, 0.25, 0.5, 0.75, 1]
    .map((f) => {
      const x = (LEFT + plotWidth * f).toFixed(1);
      return `<text x="${x}" y="${y}" text-anchor="middle" class="value">${fmt(Math.round(spanS * f * 10) / 10)} s</text>`;
    })
    .join('');
}

export function renderTimelineSvg(timeline: Timeline): string {
  const style =
    '<style>text{font-family:-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}.label{font-size:12px;fill:#212121}.value{font-size:11px;fill:#424242}.grid{stroke:#eeeeee}.axis{stroke:#9e9e9e}</style>';
  const unreadable = timeline.unreadable > 0 ? ` (${timeline.unreadable} unreadable records left out)` : '';
  if (timeline.series.length === 0) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="40" viewBox="0 0 ${WIDTH} 40">${style}<text x="${LEFT}" y="24" class="label">No requests recorded${escapeHtml(unreadable)}.</text></svg>\n`;
  }
  const panels = timeline.series.map((s, i) => panel(s, i, GAP + i * (PANEL + GAP)));
  const axisY = GAP + timeline.series.length * (PANEL + GAP) - GAP + 18;
  const height = axisY + AXIS - 12;
  const caption = unreadable
    ? `<text x="${WIDTH - RIGHT}" y="${height - 4}" text-anchor="end" class="value">${escapeHtml(unreadable.trim())}</text>`
    : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img">${style}${panels.join('')}${timeAxis(timeline.spanS, axisY)}${caption}</svg>\n`;
}
