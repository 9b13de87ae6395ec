import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import YAML from 'yaml';
import { loadPipelineConfig } from '../../activities/run/configFile';
import { describeIssues, pipelineConfigSchema } from '../../contracts/config';
import { fencedBlocks } from '../helpers/markdown';

// Every YAML example in the docs is a pivot-miner config, or a part of one, that the schema accepts,
// so an example can no longer drift from the code. The rule: each ```yaml block in README.md and
// docs/*.md is checked unless the line before it is NOT_OURS. A block is a whole config when it has
// `name` and `collect`, else a part: its top-level keys must be config keys, and it is checked inside
// the smallest whole config. A misspelt top-level key therefore fails rather than being skipped.

const repoRoot = path.resolve(__dirname, '../..');
const NOT_OURS = '<!-- not a pivot-miner config -->';
const CONFIG_KEYS = new Set(Object.keys(pipelineConfigSchema.shape));
/** The smallest whole config a part is checked in. */
const MINIMAL = { name: 'doc_example', collect: { input_jsonl: 'tasks.jsonl', agent_name: 'doc_agent' } };

interface YamlBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  notOurs: boolean;
}

/** The ```yaml blocks of a Markdown text. */
function yamlBlocks(file: string, markdown: string): YamlBlock[] {
  return fencedBlocks(file, markdown)
    .filter((block) => block.lang === 'yaml')
    .map((block) => ({ file, line: block.line, text: block.text, notOurs: block.before === NOT_OURS }));
}

/** Why a block is not a config the schema accepts, or undefined when it is. */
function configExampleProblem(block: YamlBlock): string | undefined {
  const where = `${block.file}:${block.line}`;
  const value = YAML.parse(block.text) as unknown;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return `${where}: a yaml block that is not a mapping (mark it ${NOT_OURS} if it is not ours)`;
  const part = value as Record<string, unknown>;
  const strangers = Object.keys(part).filter((key) => !CONFIG_KEYS.has(key));
  if (strangers.length > 0)
    return `${where}: not config keys: ${strangers.join(', ')} (mark the block ${NOT_OURS} if it is not a pivot-miner config)`;
  const whole =
    'name' in part && 'collect' in part
      ? part
      : { ...MINIMAL, ...part, collect: { ...MINIMAL.collect, ...(part.collect as object | undefined) } };
  const parsed = pipelineConfigSchema.safeParse(whole);
  return parsed.success ? undefined : describeIssues(where, parsed.error);
}

function docFiles(): string[] {
  const docs = readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', ...docs.sort()];
}

test('every yaml block in README.md and docs/ is a config (or part of one) the schema accepts', () => {
  const blocks = docFiles().flatMap((file) => yamlBlocks(file, readFileSync(path.join(repoRoot, file), 'utf8')));
  const checked = blocks.filter((block) => !block.notOurs);
  assert.ok(checked.length >= 6, `found ${checked.length} config examples`);
  assert.deepEqual(
    checked.map(configExampleProblem).filter((problem) => problem !== undefined),
    [],
  );
});

test('the rule refuses a misspelt key, a wrong value and an unmarked foreign block', () => {
  const block = (text: string, notOurs = false): YamlBlock => ({ file: 'doc.md', line: 3, text, notOurs });
  assert.equal(
    configExampleProblem(block('servers:\n  mode: attach\n  head_url: http://127.0.0.1:23000\n')),
    undefined,
  );
  assert.match(configExampleProblem(block('local_profile:\n  num_sample: 8\n'))!, /^doc\.md:3: local_profile/);
  assert.match(configExampleProblem(block('collect:\n  num_repeats: four\n'))!, /collect\.num_repeats/);
  assert.match(configExampleProblem(block('scrape_configs: []\n'))!, /not config keys: scrape_configs/);
  const marked = yamlBlocks('doc.md', `text\n\n${NOT_OURS}\n\n\`\`\`yaml\nscrape_configs: []\n\`\`\`\n`);
  assert.deepEqual(
    marked.map((b) => [b.line, b.notOurs]),
    [[5, true]],
  );
});

test('every config under configs/ loads', async () => {
  const configs = readdirSync(path.join(repoRoot, 'configs')).filter((f) => f.endsWith('.yaml'));
  assert.ok(configs.includes('nightly.yaml'));
  for (const file of configs) await loadPipelineConfig(path.join(repoRoot, 'configs', file));
});
