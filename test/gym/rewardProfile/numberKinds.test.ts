import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { isPyDict, loadsPythonJson, type PyValue } from '../../../gym/pythonJson';
import { lineKinds } from '../../../gym/rewardProfile/numberKinds';
import { fixturesDir } from '../../helpers/fixtures';

// The number kinds read from a rollout line's text without decoding it must be the ones a full
// decode with Python's types gives.

function decodedKinds(dict: PyValue | undefined): Map<string, string> {
  const kinds = new Map<string, string>();
  if (!isPyDict(dict)) return kinds;
  for (const [k, v] of dict) {
    if (typeof v === 'number') kinds.set(k, 'float');
    else if (typeof v === 'bigint' || typeof v === 'boolean') kinds.set(k, 'int');
  }
  return kinds;
}

function assertSameAsDecoded(line: string): void {
  const value = loadsPythonJson(line);
  const response = isPyDict(value) ? value.get('response') : undefined;
  const expected = {
    top: decodedKinds(value),
    usage: decodedKinds(isPyDict(response) ? response.get('usage') : undefined),
  };
  const actual = lineKinds(line);
  const sorted = (m: Map<string, string>) => [...m].sort(([a], [b]) => (a < b ? -1 : 1));
  assert.deepEqual(
    { top: sorted(actual.top), usage: sorted(actual.usage) },
    { top: sorted(expected.top), usage: sorted(expected.usage) },
    line.slice(0, 200),
  );
}

test('kinds of top-level and usage numbers, whatever surrounds them', () => {
  const lines = [
    '{"reward":1.0,"ok":true,"n":3,"response":{"output":[{"text":"\\"usage\\": {\\"x\\": 1.0}"}],"usage":{"input_tokens":5,"t":1e-6}}}',
    '{ "response" : { "usage" : { "a" : -0 , "b" : 2.5E3 } , "id" : "r" } , "reward" : 0 , "s" : "a\\\\" , "z" : null }',
    '{"usage":{"x":1},"response":null,"reward":1,"nested":{"reward":1.0},"list":[1.0,{"response":{"usage":{"q":1}}}]}',
    '{"response":{"usage":[1]},"reward":-1.5,"b":false,"k\\u00e9y":2,"esc":"\\\\\\"}"}',
    '{"reward":1,"reward":"x","response":{"usage":{"a":1,"a":1.0}}}',
    '{}',
  ];
  for (const line of lines) assertSameAsDecoded(line);
});

test('kinds of real rollouts equal the decoded ones', () => {
  const file = path.join(fixturesDir, 'gym/workplace_assistant/example_rollouts.jsonl');
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim());
  assert.ok(lines.length >= 5);
  for (const line of lines) assertSameAsDecoded(line);
  assert.ok(lineKinds(lines[0]!).usage.size > 0, 'the fixture has usage numbers');
});
