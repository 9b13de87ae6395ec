// The character rules of CPython's `json` decoder, shared by the two ports that need its exact
// behaviour: the verifier (typed values for argument comparison) and the validator (its messages).

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** Only these four: CPython's decoder does not accept other Unicode whitespace between tokens. */
export function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/** ASCII digits only; Python's `json` rejects other Unicode decimal digits in numbers. */
export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

export function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}

/** The one-character escapes after a backslash; `\u` is handled by the decoders. */
export const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};
