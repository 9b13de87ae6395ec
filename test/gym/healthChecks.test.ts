import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pipelineConfigSchema } from '../../contracts/config';
import { qualitySummaryJson, runHealthChecks } from '../../gym/healthChecks';
import { runNemoGymPython } from '../helpers/nemoGymPython';

// The fixture trips every one of 0.7.0's checks (each in a record built for it: runaway generation,
// zero completion tokens, a failed call ending the rollout, a duplicated identity, an unreadable
// record and trajectory, tasks whose every repeat is unhealthy, ...), beside healthy and unobserved
// records, integer and string task indexes and one rollout written by two stages.
const FIXTURE = path.join(__dirname, 'healthChecks', 'rollouts.jsonl');

// 0.7.0's own run_health_checks, serially, writing quality_summary.json into the given directory.
const ZERO_SEVEN = `
import sys
from pathlib import Path
from nemo_gym.rollout_health import run_health_checks
rollouts, out, ignored = sys.stdin.read().split("\\n")[:3]
run_health_checks(Path(rollouts), output_dir=Path(out), workers=1, ignored_checks=ignored)
`;

/** `health_check_ignored_checks` as the config reads the string 0.7.0 is given. */
const ignoredChecks = (ids: string) => pipelineConfigSchema.shape.health_check_ignored_checks.parse(ids);

/** quality_summary.json and rollout_verdicts.jsonl as 0.7.0 writes them. */
async function theirs(ignored: string, rollouts = FIXTURE): Promise<[string, string]> {
  const out = await mkdtemp(path.join(os.tmpdir(), 'health-070-'));
  try {
    await runNemoGymPython(ZERO_SEVEN, `${rollouts}\n${out}\n${ignored}\n`, '0.7.0');
    const read = (file: string) => readFile(path.join(out, file), 'utf8');
    return [await read('quality_summary.json'), await read('rollout_verdicts.jsonl')];
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

async function ours(ignored: string, rollouts = FIXTURE): Promise<[string, string]> {
  const out = await mkdtemp(path.join(os.tmpdir(), 'health-ours-'));
  try {
    const verdictsPath = path.join(out, 'rollout_verdicts.jsonl');
    const summary = await runHealthChecks([rollouts], ignoredChecks(ignored) ?? [], { verdictsPath });
    assert.deepEqual(await readdir(out), ['rollout_verdicts.jsonl'], 'the scratch rows are removed');
    return [qualitySummaryJson(summary), await readFile(verdictsPath, 'utf8')];
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

test('the health summary and verdicts equal 0.7.0 quality_summary.json and rollout_verdicts.jsonl byte for byte, every check tripped', async () => {
  const [[expected, expectedRows], [actual, actualRows]] = await Promise.all([theirs(''), ours('')]);
  assert.equal(actual, expected);
  assert.equal(actualRows, expectedRows);
  const issues = (JSON.parse(actual) as { run: { issues: Record<string, number> } }).run.issues;
  const tripped = Object.entries(issues).filter(([, n]) => n > 0);
  assert.ok(tripped.length >= 3, `only ${tripped.length} checks tripped`);
});

test('ignored checks as 0.7.0 names them: neither run nor counted, and listed', async () => {
  const ignored = 'model_call_failed, task_consistently_unhealthy,rollout_duplicate_identity,record_unreadable';
  const [[expected, expectedRows], [actual, actualRows]] = await Promise.all([theirs(ignored), ours(ignored)]);
  assert.equal(actual, expected);
  assert.equal(actualRows, expectedRows);
  const run = (JSON.parse(actual) as { run: { ignored_checks: string[]; issues: Record<string, number> } }).run;
  assert.deepEqual(run.ignored_checks, [
    'model_call_failed',
    'record_unreadable',
    'rollout_duplicate_identity',
    'task_consistently_unhealthy',
  ]);
  assert.equal(run.issues.model_call_failed, 0);
});

// A merged stage's rollouts come in key order, each identity once: their verdict rows are written in
// 0.7.0's order as they come, and the file is kept as written rather than copied out sorted.
test('rollouts in key order, each identity once: the verdicts equal 0.7.0 rollout_verdicts.jsonl byte for byte', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'health-ordered-'));
  try {
    const seen = new Set<string>();
    const ordered = (await readFile(FIXTURE, 'utf8')).split('\n').filter((line) => {
      const record = (() => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      })();
      const key = JSON.stringify([record?._ng_task_index, record?._ng_rollout_index]);
      const kept = Number.isInteger(record?._ng_task_index) && record?.stage_index === undefined && !seen.has(key);
      seen.add(key);
      return kept;
    });
    assert.ok(ordered.length >= 8, `only ${ordered.length} records kept`);
    const rollouts = path.join(dir, 'rollouts.jsonl');
    await writeFile(rollouts, `${ordered.join('\n')}\n`);
    const [[expected, expectedRows], [actual, actualRows]] = await Promise.all([
      theirs('', rollouts),
      ours('', rollouts),
    ]);
    assert.equal(actual, expected);
    assert.equal(actualRows, expectedRows);
    assert.equal(actualRows.split('\n').length, ordered.length + 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an unknown check id is refused, in a list or a string', () => {
  assert.throws(() => ignoredChecks('model_call_failed,no_such_check'), /Invalid option/);
  assert.throws(
    () => pipelineConfigSchema.shape.health_check_ignored_checks.parse(['no_such_check']),
    /Invalid option/,
  );
  assert.deepEqual(ignoredChecks(' model_call_failed, ,model_call_failed'), ['model_call_failed']);
});
