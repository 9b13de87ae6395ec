// Python 3.11's `repr()` of decoded JSON values, because the reference validator's messages embed
// it (`found {'type': 'function', '2': False}`, `[' get\xa0weather']`).
import { PyFloat, PyInt, type PyValue } from './pythonJson';
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

/** Python's shortest round-trip float repr: fixed notation for decimal exponents -4..15, otherwise
 * scientific with a signed, at-least-two-digit exponent. */
export function pyReprFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  // toExponential() with no argument yields the shortest digits that round-trip, as Python does.
  const [mantissa, exponentText] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    const fraction = digits.length > 1 ? '.' + digits.slice(1) : '';
    const exponentSign = exponent < 0 ? '-' : '+';
    return `${sign}${digits[0]}${fraction}e${exponentSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1) || '0';
  return `${sign}${whole}.${fraction}`;
}

export function pyRepr(value: PyValue | undefined): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') return pyReprString(value);
  if (value instanceof PyInt) return BigInt(value.digits).toString();
  if (value instanceof PyFloat) return pyReprFloat(value.value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  const members: string[] = [];
  for (const [key, member] of value) members.push(`${pyReprString(key)}: ${pyRepr(member)}`);
  return `{${members.join(', ')}}`;
}
