import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../../scripts/cliProgram';
import { renderCliReference } from '../../../scripts/cliReference/render';
import { staleDocMessage } from '../../helpers/staleDoc';

const DOC = 'docs/cli.md';
const committed = () => readFileSync(path.resolve(__dirname, '../../..', DOC), 'utf8');

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub, ...allCommands(sub)]);
}

test(`committed ${DOC} matches the commands' definitions`, () => {
  const stale = staleDocMessage(DOC, committed(), renderCliReference(buildProgram()));
  if (stale) assert.fail(stale);
});

test(`a flag added to a command without regenerating ${DOC} is caught, by name`, () => {
  const program = buildProgram();
  const run = program.commands.find((c) => c.name() === 'run');
  assert.ok(run, 'the program defines run');
  run.option('--planted-flag <n>', 'a flag nobody documented', '3');
  const stale = staleDocMessage(DOC, committed(), renderCliReference(program));
  assert.ok(stale, 'the planted flag went unnoticed');
  assert.match(stale, /generated: \| `--planted-flag <n>` \| `3` \| a flag nobody documented \|/);
});

test('every command and option says what it is for', () => {
  const commands = allCommands(buildProgram());
  assert.ok(commands.length >= 20, `found ${commands.length} commands`);
  const silent = commands.flatMap((command) => [
    ...(command.description() ? [] : [`${command.name()}`]),
    ...command.options.filter((o) => !o.description).map((o) => `${command.name()} ${o.flags}`),
  ]);
  assert.deepEqual(silent, []);
});
