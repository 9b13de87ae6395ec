import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import {
  computeDatasetMetrics,
  datasetMetricsHeader,
  formatDatasetMetricsFile,
  jsonDumpedWordCount,
  roundMetric,
  NUMBER_OF_EXAMPLES,
} from '../../gym/datasetMetrics';
import { fixturesDir } from '../helpers/fixtures';

// Every `<stem>.jsonl` + `<stem>_metrics.json` pair among the NeMo Gym fixtures. Files written by an
// older NeMo Gym also carry a t-digest `Median`, which the current format dropped; everything else is
// compared field by field, and files already in the current format must match byte for byte.
const gymDir = path.join(fixturesDir, 'gym');
const pairs = readdirSync(gymDir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(path.join(gymDir, d.name))
      .filter((f) => f.endsWith('_metrics.json'))
      .map((f) => ({ dir: d.name, stem: f.slice(0, -'_metrics.json'.length) }))
      .filter(({ dir, stem }) => existsSync(path.join(gymDir, dir, `${stem}.jsonl`))),
  );

function readRows(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const DATASET_CONFIG_KEYS = new Set([
  'name',
  'type',
  'jsonl_fpath',
  'num_repeats',
  'source',
  'gitlab_identifier',
  'huggingface_identifier',
  'license',
]);

function withoutMedian(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== 'Median'));
}

test('fixture pairs are found', () => {
  assert.ok(pairs.length >= 8, `only ${pairs.length} pairs`);
});

for (const { dir, stem } of pairs) {
  test(`metrics of ${dir}/${stem}.jsonl match NeMo Gym's ${stem}_metrics.json`, () => {
    const expectedText = readFileSync(path.join(gymDir, dir, `${stem}_metrics.json`), 'utf8');
    const expected = JSON.parse(expectedText) as Record<string, unknown>;
    const metrics = computeDatasetMetrics(readRows(path.join(gymDir, dir, `${stem}.jsonl`)));

    const expectedMetricKeys = Object.keys(expected).filter((k) => !DATASET_CONFIG_KEYS.has(k));
    assert.deepEqual(Object.keys(metrics), expectedMetricKeys, 'same metric keys in the same order');
    for (const key of expectedMetricKeys) {
      assert.deepEqual(metrics[key], withoutMedian(expected[key]), key);
    }

    const hasMedian = expectedText.includes('"Median"');
    if (!hasMedian) {
      const header = Object.fromEntries(Object.entries(expected).filter(([k]) => DATASET_CONFIG_KEYS.has(k)));
      assert.equal(formatDatasetMetricsFile(header, metrics), expectedText, 'byte-identical file');
    }
  });
}

test('json-dumped word count counts the spaces Python separators add', () => {
  assert.equal(jsonDumpedWordCount({ input: 'a b', tools: [] }), 5); // {"input": "a b", "tools": []}
  assert.equal(jsonDumpedWordCount({ input: 'x\ny' }), 2, 'newlines are escaped, so they do not split');
});

test('roundMetric keeps 2 decimals from 1 up and 3 below', () => {
  assert.equal(roundMetric(2342.7891), 2342.79);
  assert.equal(roundMetric(-1.23456), -1.23);
  assert.equal(roundMetric(0.83666), 0.837);
  assert.equal(roundMetric(0.4472135955), 0.447);
});

test('an empty dataset reports zeros, like NeMo Gym', () => {
  const metrics = computeDatasetMetrics([]);
  assert.equal(metrics[NUMBER_OF_EXAMPLES], 0);
  assert.deepEqual(metrics['Number of tools'], {
    'Total # non-null values': 0,
    Average: 0,
    Min: 0,
    Max: 0,
    'Standard deviation': 0,
  });
});

test('extra fields: numbers, booleans and list items aggregate; strings count unique/total; objects are ignored', () => {
  const metrics = computeDatasetMetrics([
    {
      responses_create_params: { input: 'hi', temperature: 0.5 },
      score: 1,
      flag: true,
      tags: ['a', 'b'],
      meta: { x: 1 },
    },
    {
      responses_create_params: {
        input: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      },
      score: 3,
      flag: false,
      tags: ['a'],
    },
    { responses_create_params: 'not an object', score: 100 },
  ]);
  assert.equal(metrics[NUMBER_OF_EXAMPLES], 2, 'rows without an object responses_create_params are offending');
  assert.deepEqual(Object.keys(metrics).slice(5), ['score', 'flag', 'tags']);
  assert.deepEqual(metrics.score, {
    'Total # non-null values': 2,
    Average: 2,
    Min: 1,
    Max: 3,
    'Standard deviation': 1.41,
  });
  assert.deepEqual(metrics.flag, {
    'Total # non-null values': 2,
    Average: 0.5,
    Min: 0,
    Max: 1,
    'Standard deviation': 0.707,
  });
  assert.deepEqual(metrics.tags, { unique_count: 2, total_count: 3 });
  assert.deepEqual(metrics['Number of turns'], {
    'Total # non-null values': 2,
    Average: 1.5,
    Min: 1,
    Max: 2,
    'Standard deviation': 0.707,
  });
  assert.equal((metrics.Temperature as { 'Total # non-null values': number })['Total # non-null values'], 1);
});

test('the metrics file starts with the dataset config block', () => {
  const text = formatDatasetMetricsFile(
    datasetMetricsHeader({ name: 'pivots', type: 'train', jsonl_fpath: '/x/pivots.jsonl', license: 'TBD' }),
    computeDatasetMetrics([{ responses_create_params: { input: 'hi', tools: [] } }]),
  );
  assert.ok(
    text.startsWith(
      '{\n    "name": "pivots",\n    "type": "train",\n    "jsonl_fpath": "/x/pivots.jsonl",\n    "num_repeats": 1,\n    "source": null,\n    "gitlab_identifier": null,\n    "huggingface_identifier": null,\n    "license": "TBD",\n    "Number of examples": 1,\n    "Number of tools": {\n        "Total # non-null values": 1,\n        "Average": 0.0,',
    ),
    text,
  );
  assert.ok(!text.endsWith('\n'), 'json.dump writes no trailing newline');
});
