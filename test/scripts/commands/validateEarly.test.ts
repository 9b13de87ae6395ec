import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pivotValidatorOptionsSchema } from '../../../gym/validator';
import { validateOptionsFromArgv } from '../../../scripts/commands/validate';
import { guessJob } from '../../../scripts/commands/validateEarly';

// The guess only starts threads early; the validator keeps them when the options it parses are the
// same job. So a guess must match the parser wherever it is made, and is best not made otherwise.

/** The fast-path options the validator derives from what the command parses of `args`. */
function parsedOptions(args: readonly string[]) {
  const { agentRef, requireFields, requireAnyFields, checkToolNames } = pivotValidatorOptionsSchema.parse(
    validateOptionsFromArgv(args),
  );
  return { agentRef, requireFields, requireAnyFields, checkToolNames };
}

test('on the plain spellings the guess is the job the command parses', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'validate-early-'));
  try {
    const file = path.join(dir, 'rows.jsonl');
    writeFileSync(file, 'x'.repeat(1000));
    for (const args of [
      ['--path', file],
      [`--path=${file}`, '--require-field', 'a.b', '--require-field=c', '--agent-ref', 'my_agent'],
      [
        '--require-any-field',
        ' a ,\tb,',
        '--path',
        file,
        '--require-any-field=,',
        '--agent-ref=',
        '--no-check-tool-names',
      ],
    ]) {
      const guess = guessJob(args);
      assert.ok(guess !== undefined, args.join(' '));
      assert.deepEqual(guess.job, { path: file, fileSize: 1000, options: parsedOptions(args) }, args.join(' '));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no guess for anything else: other options, repeated single values, dashed values, a missing file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'validate-early-'));
  try {
    const file = path.join(dir, 'rows.jsonl');
    writeFileSync(file, 'x');
    assert.ok(guessJob(['--path', file]) !== undefined);
    for (const args of [
      ['--path', file, '--threads', '2'],
      ['--path', file, '--config', 'gym.yaml'],
      ['--path', file, '--help'],
      ['--path', file, '--path', file],
      ['--path', file, '--agent-ref', 'a', '--agent-ref', 'b'],
      ['--path', file, '--require-field', '--no-check-tool-names'],
      ['--path', file, '--no-check-tool-names=1'],
      ['--path', file, 'extra'],
      ['--path', file, '--'],
      ['--path'],
      ['--agent-ref', 'a'],
      ['--path', path.join(dir, 'missing.jsonl')],
    ]) {
      assert.equal(guessJob(args), undefined, args.join(' '));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
