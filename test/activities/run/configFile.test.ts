import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../../../contracts/errors';
import { loadPipelineConfig, resolveInside } from '../../../activities/run/configFile';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pivot-miner-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const minimal = 'name: t\ncollect:\n  input_jsonl: tasks.jsonl\n  agent_name: a\n';

test('the demo config loads with its defaults filled in', async () => {
  const config = await loadPipelineConfig(path.resolve(__dirname, '../../../configs/demo.yaml'));
  assert.equal(config.servers.mode, 'embedded');
  assert.equal(config.local_profile.num_samples, 8);
  assert.equal(config.local_profile.tool_call_comparator_config.word_count_similarity_threshold, 0.1);
});

test('errors name the file, the key path and what was expected', async () => {
  const cases: Array<[string, RegExp]> = [
    [minimal + 'collect_extra: 1\n', /(:\d+)?: .*collect_extra/],
    [minimal.replace('agent_name: a', 'agent_name: 3'), /:4: collect\.agent_name: .*expected string/],
    [minimal + 'local_profile:\n  num_samples: 1\n', /:6: local_profile\.num_samples: .*>=2/],
    [minimal + 'servers:\n  mode: cloud\n', /:6: servers\.mode: .*'embedded' \| 'attach' \| 'spawn'/],
    [minimal + 'local_profile:\n  model:\n    api_key_env: "sk-abc def"\n', /:7: local_profile\.model\.api_key_env: /],
  ];
  for (const [text, pattern] of cases) {
    const file = write('bad.yaml', text);
    await assert.rejects(loadPipelineConfig(file), (err: Error) => {
      assert.ok(err instanceof ConfigError);
      assert.ok(err.message.startsWith(file), err.message);
      assert.match(err.message, pattern);
      return true;
    });
  }
});

test('invalid YAML names the line; a missing file says so', async () => {
  const file = write('broken.yaml', 'name: t\ncollect: [\n');
  await assert.rejects(loadPipelineConfig(file), /broken\.yaml:\d+: invalid YAML/);
  await assert.rejects(loadPipelineConfig(path.join(dir, 'absent.yaml')), /absent\.yaml: cannot read config: ENOENT/);
});

test('paths may not escape their root', () => {
  assert.equal(resolveInside('/a/b', '/a/b', 'c/d.jsonl'), '/a/b/c/d.jsonl');
  assert.throws(() => resolveInside('/a/b', '/a/b', '../c.jsonl'), /outside the allowed root \/a\/b/);
  assert.throws(() => resolveInside('/a/b', '/a/b', '/etc/passwd'), /outside the allowed root/);
});
