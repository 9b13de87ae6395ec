// Python 3.11's `repr()` of decoded JSON values, because the reference validator's messages embed
// it (`found {'type': 'function', '2': False}`, `[' get\xa0weather']`).
import type { PyValue } from '../pythonJson';
import { pythonFloatRepr } from '../pythonJsonDumps';
import { assignedAfterUnicode14 } from './unicode14';

// Python's str.isprintable() is false for these general categories (plus the newer-than-14.0 code
// points handled below); U+0020 is the one separator it prints.
const unprintableCategory = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function isAssignedAfterUnicode14(codePoint: number): boolean {
  for (let i = 0; i < assignedAfterUnicode14.length; i += 2) {
    if (codePoint < assignedAfterUnicode14[i]) return false;
    if (codePoint <= assignedAfterUnicode14[i + 1]) return true;
  }
  return false;
}

function isPythonPrintable(char: string, codePoint: number): boolean {
  if (codePoint === 0x20) return true;
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return false;
  return !unprintableCategory.test(char) && !isAssignedAfterUnicode14(codePoint);
}

function hex(codePoint: number, width: number): string {
  return codePoint.toString(16).padStart(width, '0');
}

export function pyReprString(value: string): string {
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
  let out = quote;
  for (const char of value) {
    const codePoint = char.codePointAt(0) as number;
    if (char === quote || char === '\\') out += '\\' + char;
    else if (char === '\t') out += '\\t';
    else if (char === '\n') out += '\\n';
    else if (char === '\r') out += '\\r';
    else if (codePoint < 0x20 || codePoint === 0x7f) out += '\\x' + hex(codePoint, 2);
    else if (codePoint < 0x7f || isPythonPrintable(char, codePoint)) out += char;
    else if (codePoint <= 0xff) out += '\\x' + hex(codePoint, 2);
    else if (codePoint <= 0xffff) out += '\\u' + hex(codePoint, 4);
    else out += '\\U' + hex(codePoint, 8);
  }
  return out + quote;
}

/** `repr(float)`: json.dumps' digits, but Python's own spelling of the non-finite values. */
export function pyReprFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  return pythonFloatRepr(value);
}

export function pyRepr(value: PyValue | undefined): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyReprString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return pyReprFloat(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const members: string[] = [];
  for (const [key, member] of value) members.push(`${pyReprString(key)}: ${pyRepr(member)}`);
  return `{${members.join(', ')}}`;
}
