import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { jsonText } from '../../gym/jsonl';
import { parseKinded } from '../../gym/kindedJson';
import { fixturesDir } from '../helpers/fixtures';

/** orjson's text of a JSON text, as the decoding path writes it. */
export const reencoded = (text: string): string => jsonText(parseKinded(text).kinded);

/** Every NeMo Gym fixture rollout (`gym/<environment>/example_rollouts.jsonl`), in orjson's form. */
export function fixtureRollouts(): string[] {
  const dir = path.join(fixturesDir, 'gym');
  return readdirSync(dir).flatMap((d) => {
    let text: string;
    try {
      text = readFileSync(path.join(dir, d, 'example_rollouts.jsonl'), 'utf8');
    } catch {
      return [];
    }
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map(reencoded);
  });
}
