import { decodePythonJson, PythonJsonFailure } from '../../../gym/pythonJson';
import { UNDECIDED } from '../../../gym/verifier/argumentPair';
import { compareArgumentValues } from '../../../gym/verifier/compare';
import { toolCallComparatorConfigSchema } from '../../../gym/verifier/config';

// What the verifier's text tests check the in-place reading against (the decoding path), and the
// argument texts they make up for it: JSON of the shapes policies write, and its broken variants.

/** The verdict of the decoding path: both texts through `json.loads`, then the tree walk. */
export function decodedVerdict(expected: string, actual: string, floatThreshold: number, wordThreshold: number) {
  const expectedValue = decodePythonJson(expected);
  if (expectedValue instanceof PythonJsonFailure) return UNDECIDED;
  const actualValue = decodePythonJson(actual);
  if (actualValue instanceof PythonJsonFailure) return 'ARGUMENTS_DECODE_ERROR';
  const config = toolCallComparatorConfigSchema.parse({
    word_count_similarity_threshold: wordThreshold,
    floating_point_comparison_threshold: floatThreshold,
  });
  return compareArgumentValues(expectedValue, actualValue, config);
}

const KEYS = ['a', 'b', 'city', 'x', '10', '2', '__proto__', 'a\\u0062'];
const WORDS = ['Paris', 'paris', 'new', 'York', 'NEW', 'ß', 'ΟΔΟΣ', 'a', 'b'];
const SEPARATORS = [
  ' ',
  '  ',
  '\\n',
  '\\t',
  '\\r',
  '\\f',
  '\\u0041',
  '\\ud83d\\ude00',
  '\\u00a0',
  '\\u0085',
  '\\b',
  '\\"',
  '\\/',
];
const SCALARS = [
  '0',
  '-0',
  '1',
  '2',
  '1.0',
  '1.0000001',
  '1E2',
  '100.0',
  '-0.0',
  '1e400',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '9007199254740992',
  '0.1',
  '0.30000000000000004',
  'true',
  'false',
  'null',
  '""',
  '" "',
  '"x"',
];

export function randomText(random: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const space = () => pick(['', '', ' ', '\n  ', '\t']);
  const roll = random();
  if (depth < 3 && roll < 0.25) {
    const members = Array.from(
      { length: Math.floor(random() * 4) },
      () => `${space()}"${pick(KEYS)}"${space()}:${space()}${randomText(random, depth + 1)}`,
    );
    return `{${members.join(',')}${space()}}`;
  }
  if (depth < 3 && roll < 0.4) {
    return `[${Array.from({ length: Math.floor(random() * 4) }, () => space() + randomText(random, depth + 1)).join(',')}]`;
  }
  if (roll < 0.6) {
    const words = Array.from({ length: Math.floor(random() * 4) }, () => pick(WORDS));
    return `"${words.map((word, index) => (index ? pick(SEPARATORS) : '') + word).join('')}"`;
  }
  return pick(SCALARS);
}

/** The ways a policy's arguments differ from the expected ones, including broken JSON. */
export function mutate(random: () => number, text: string): string {
  const at = Math.floor(random() * (text.length + 1));
  switch (Math.floor(random() * 8)) {
    case 0:
      return text;
    case 1:
      return text.slice(0, at) + text.slice(at + 1);
    case 2:
      return text.slice(0, at) + [',', '}', ']', '"', ' ', '\\', '0', 'e'][Math.floor(random() * 8)] + text.slice(at);
    case 3:
      return text.replace(/\}$/, ',}');
    case 4:
      return text.replace(/"([^"\\]*)":/, '"$1_x":');
    case 5:
      return randomText(random, 0);
    case 6: {
      // The same members in another order.
      const value = decodePythonJson(text);
      if (!(value instanceof Map)) return text;
      return `{${[...value.keys()]
        .reverse()
        .map((key) => `${JSON.stringify(key)}: ${text.includes(':') ? randomText(random, 1) : '1'}`)
        .join(', ')}}`;
    }
    default:
      return text.replace(/ /g, '');
  }
}
