// The recorded reference cases of the pivot-dataset validator (test/fixtures/validator), shared by
// the validator tests.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { parseRequireAnyField, type PivotValidatorOptions } from '../../gym/validator';
import { fixturesDir } from '../helpers/fixtures';

export const casesDir = path.join(fixturesDir, 'validator');

const caseSchema = z.object({
  name: z.string(),
  args: z.array(z.string()),
  file: z.string(),
  exit_code: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
});

export const cases = z.array(caseSchema).parse(JSON.parse(readFileSync(path.join(casesDir, 'cases.json'), 'utf8')));

/** The reference CLI's options as plain argv (`--opt value` or `--opt=value`), for the library API. */
export function optionsFromArgs(filePath: string, args: readonly string[]): PivotValidatorOptions {
  const options = {
    path: filePath,
    requireFields: [] as string[],
    requireAnyFields: [] as string[][],
    checkToolNames: true,
    agentRef: undefined as string | undefined,
  };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].includes('=')
      ? [args[i].slice(0, args[i].indexOf('=')), args[i].slice(args[i].indexOf('=') + 1)]
      : [args[i], undefined];
    if (flag === '--no-check-tool-names') {
      options.checkToolNames = false;
      continue;
    }
    const value = inline ?? args[++i];
    if (flag === '--agent-ref') options.agentRef = value;
    else if (flag === '--require-field') options.requireFields.push(value);
    else if (flag === '--require-any-field') options.requireAnyFields.push(parseRequireAnyField(value));
    else throw new Error(`unexpected case argument ${flag}`);
  }
  return options;
}
