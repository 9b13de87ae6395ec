import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { computeDatasetMetrics } from '../../gym/datasetMetrics';
import { renderReport, type ReportData } from '../../gym/report';
import { selectPivots, type LocalProfileStats } from '../../gym/selection';
import { computeSelectionMetrics, type CandidateSummary } from '../../gym/selectionMetrics';

const CHROMIUM = '/usr/bin/chromium';
const TOOLS = ['get_weather', 'book_flight', 'search_web', '<b>tool&co</b>'];

/** 120 candidates whose K = 8 local rewards sweep every pass rate, so every chart has data. */
function reportData(simulatorLabel: string | null): ReportData {
  const candidates: CandidateSummary[] = [];
  const profiles: LocalProfileStats[] = [];
  for (let i = 0; i < 120; i++) {
    const isMessage = i % 5 === 0;
    candidates.push({
      index: i,
      uuid: `uuid-${i}`,
      line: i + 1,
      action_type: isMessage ? 'message' : 'function_call',
      tool_names: isMessage ? [] : [TOOLS[i % TOOLS.length]!],
      depth: i % 11,
      source_reward: i % 4 === 0 ? 0.5 : 1,
    });
    if (i % 17 === 0) continue;
    const passes = (i * 7) % 9;
    profiles.push({
      task_index: i,
      pass_rate: passes / 8,
      min_reward: passes === 8 ? 1 : 0,
      max_reward: passes === 0 ? 0 : 1,
      num_samples: 8,
      expected_num_samples: 8,
      missing_num_samples: 0,
    });
  }
  const selections = selectPivots(candidates, profiles, { max_pivots: 50 });
  return {
    datasetName: 'demo',
    agentName: 'demo_pivot_agent',
    simulatorLabel,
    selection: computeSelectionMetrics({
      selections,
      skipReasons: new Map([
        ['parallel_tool_calls', 9],
        ['malformed_trajectory', 2],
      ]),
      upstream: { tasks: 40, rollouts: 160, positive_trajectories: 70, decision_points: 130, deduped: 4 },
      options: { max_pivots: 50 },
    }),
    datasetMetrics: computeDatasetMetrics([{ responses_create_params: { input: 'hi', tools: [] } }]),
    files: { pivots: 'pivots.jsonl', gymConfig: 'demo_single_step_tool_use_with_argument_comparison.yaml' },
  };
}

test('the report is one self-contained HTML page with inline SVG charts', () => {
  const html = renderReport(reportData('pivot-miner seeded policy simulator'));
  assert.ok(html.startsWith('<!DOCTYPE html>'));
  assert.ok(html.endsWith('</html>\n'));
  assert.doesNotMatch(html, /<script/i, 'no JavaScript');
  assert.doesNotMatch(html, /<link|<img|<iframe|@import|url\(/i, 'no external resources');
  assert.doesNotMatch(html, /\b(src|href)=/i, 'nothing to fetch');
  const urls = html.match(/https?:\/\/[^"'\s<]+/g) ?? [];
  assert.deepEqual([...new Set(urls)], ['http://www.w3.org/2000/svg'], 'only the SVG namespace URI');
  for (const title of ['Funnel', 'Local pass rates', 'Tool names', 'Depth', 'Skip reasons']) {
    assert.match(html, new RegExp(`<h2>${title}</h2>`));
  }
  assert.equal((html.match(/<svg /g) ?? []).length, 6, 'funnel, pass rates, tools, depth, action types, skip reasons');
  for (const stage of ['tasks', 'rollouts', 'positive trajectories', 'candidates', 'skipped', 'published']) {
    assert.match(html, new RegExp(`class="label">${stage}</text>`));
  }
  assert.match(html, /parallel_tool_calls/);
});

test('the engine timeline is linked from beside the run, not embedded, and only when the run drew one', () => {
  const without = renderReport(reportData(null));
  assert.doesNotMatch(without, /Engine timeline/);
  const html = renderReport({ ...reportData(null), engineTimelineSrc: '../engine_timeline.svg' });
  assert.match(html, /<h2>Engine timeline<\/h2>/);
  assert.deepEqual(html.match(/\b(src|href)="[^"]*"/g), ['src="../engine_timeline.svg"'], 'the one file it links');
  assert.match(renderReport({ ...reportData(null), engineTimelineSrc: 'a"b.svg' }), /src="a&quot;b.svg"/);
});

test('a simulated policy is labelled visibly; a real one is not', () => {
  const simulated = renderReport(reportData('pivot-miner seeded policy simulator'));
  assert.match(
    simulated,
    /<div class="banner" id="simulator-banner">SIMULATED POLICY[^<]*pivot-miner seeded policy simulator/,
  );
  const real = renderReport(reportData(null));
  assert.doesNotMatch(real, /simulator-banner|SIMULATED/);
});

test('a real model that profiled the pivots is named, and so is a simulated source of its rollouts', () => {
  const policy = { model: 'gemma-3-270m<q4>', api: 'chat_completions', sourceRolloutsSimulated: true } as const;
  const real = renderReport({ ...reportData(null), policy });
  assert.match(real, /id="policy-model">[^<]*<b>gemma-3-270m&lt;q4&gt;<\/b> \(\/v1\/chat\/completions\)/);
  assert.match(real, /source rollouts[^<]*seeded policy simulator/);
  assert.doesNotMatch(real, /simulator-banner/);
  const realSources = renderReport({
    ...reportData(null),
    policy: { ...policy, api: 'responses', sourceRolloutsSimulated: false },
  });
  assert.match(realSources, /\(\/v1\/responses\)/);
  assert.doesNotMatch(realSources, /simulator/);
  // The banner wins: a simulated run never claims a real model.
  const simulated = renderReport({ ...reportData('sim'), policy });
  assert.doesNotMatch(simulated, /policy-model/);
});

test('labels are HTML-escaped', () => {
  const html = renderReport(reportData(null));
  assert.doesNotMatch(html, /<b>tool&co<\/b>/);
  assert.match(html, /&lt;b&gt;tool&amp;co&lt;\/b&gt;/);
});

test('the report is deterministic', () => {
  assert.equal(renderReport(reportData('sim')), renderReport(reportData('sim')));
});

interface Png {
  width: number;
  height: number;
  /** RGB triplets, row-major. */
  rgb: Uint8Array;
}

/** Just enough PNG decoding for a Chromium screenshot: 8-bit RGB/RGBA, not interlaced. */
function decodePng(buf: Buffer): Png {
  assert.deepEqual([...buf.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'PNG signature');
  let offset = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (offset < buf.length) {
    const length = buf.readUInt32BE(offset);
    const type = buf.toString('latin1', offset + 4, offset + 8);
    const data = buf.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth');
      assert.ok(data[9] === 2 || data[9] === 6, `colour type ${data[9]}`);
      assert.equal(data[12], 0, 'not interlaced');
      channels = data[9] === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? pixels[y * stride + x - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x]! : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels]! : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = (line[x]! + predictor) & 0xff;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    for (let k = 0; k < 3; k++) rgb[i * 3 + k] = pixels[i * channels + k]!;
  }
  return { width, height, rgb };
}

function countPixels(png: Png, match: (r: number, g: number, b: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < png.rgb.length; i += 3) if (match(png.rgb[i]!, png.rgb[i + 1]!, png.rgb[i + 2]!)) n++;
  return n;
}

const near = (target: [number, number, number]) => (r: number, g: number, b: number) =>
  Math.abs(r - target[0]) <= 6 && Math.abs(g - target[1]) <= 6 && Math.abs(b - target[2]) <= 6;

test('Chromium renders the report with its plots drawn', async (t) => {
  if (!existsSync(CHROMIUM)) {
    assert.fail(
      `${CHROMIUM} not found: this test renders the report in a real browser. Install it with ` +
        '`apt-get update && apt-get install -y chromium` (Debian/Ubuntu), then rerun.',
    );
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'report-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const htmlPath = path.join(dir, 'report.html');
  const pngPath = path.join(dir, 'report.png');
  await writeFile(htmlPath, renderReport(reportData('pivot-miner seeded policy simulator')));
  await promisify(execFile)(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${path.join(dir, 'profile')}`,
      `--screenshot=${pngPath}`,
      '--window-size=1200,1600',
      pathToFileURL(htmlPath).href,
    ],
    { timeout: 180_000 },
  );
  const png = decodePng(await readFile(pngPath));
  assert.equal(png.width, 1200);
  assert.equal(png.height, 1600);

  const total = png.width * png.height;
  const nonWhite = countPixels(png, (r, g, b) => r < 245 || g < 245 || b < 245);
  assert.ok(nonWhite > total * 0.05, `only ${nonWhite} non-white pixels: the page looks blank`);
  const colours = new Set<number>();
  for (let i = 0; i < png.rgb.length; i += 3)
    colours.add((png.rgb[i]! << 16) | (png.rgb[i + 1]! << 8) | png.rgb[i + 2]!);
  assert.ok(colours.size > 50, `only ${colours.size} distinct colours`);

  // Bars are drawn in their series colours, and the simulator banner in its own.
  assert.ok(countPixels(png, near([0x2e, 0x7d, 0x32])) > 2000, 'published (green) bars');
  assert.ok(countPixels(png, near([0x45, 0x5a, 0x64])) > 2000, 'funnel stage bars');
  assert.ok(countPixels(png, near([0x9e, 0x9e, 0x9e])) > 1000, 'dropped (grey) pass-rate bars');
  assert.ok(countPixels(png, near([0xff, 0xf3, 0xcd])) > 10000, 'simulator banner');
});
