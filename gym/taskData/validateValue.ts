import { isModel, resolveNode, type SchemaNode, type TaskDataSchema } from './schema';
import { isPlainObject, pyTypeName } from './pyValues';

// A value checked against a task-data schema node as Pydantic 2 validates Python input in its
// default (lax) mode, which is what NeMo Gym 0.7.0 runs on each row: numeric strings pass as
// numbers, 0/1 and "yes"/"no" as booleans, and each failure carries Pydantic's location and error
// type (`missing`, `string_type`, `union_tag_invalid`, ...), so a verdict reads like 0.7.0's.

export type Loc = (string | number)[];

export interface TaskDataIssue {
  loc: Loc;
  /** Pydantic's error type. */
  type: string;
  msg: string;
}

type Check = (root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc) => TaskDataIssue[];

const issue = (loc: Loc, type: string, msg: string): TaskDataIssue[] => [{ loc, type, msg }];
const BOOL_WORDS = new Map([
  ...['0', 'off', 'f', 'false', 'n', 'no'].map((w) => [w, false] as const),
  ...['1', 'on', 't', 'true', 'y', 'yes'].map((w) => [w, true] as const),
]);
const INTEGER_TEXT = /^[+-]?\d+$/;
const FLOAT_WORD = /^([+-]?)(inf|infinity|nan)$/i;

export const validateNode: Check = (root, node, value, loc) => {
  const resolved = resolveNode(root, node);
  if (resolved.discriminator !== undefined) return checkTagged(root, resolved, value, loc);
  if (resolved.anyOf !== undefined || resolved.oneOf !== undefined) return checkUnion(root, resolved, value, loc);
  if (resolved.const !== undefined || resolved.enum !== undefined) return checkLiteral(resolved, value, loc);
  const check = resolved.type === undefined ? undefined : TYPE_CHECKS[resolved.type];
  return check === undefined ? [] : check(root, resolved, value, loc);
};

function checkTagged(root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  const { propertyName, mapping } = node.discriminator!;
  if (!isPlainObject(value)) return issue(loc, 'model_attributes_type', 'Input should be a valid dictionary or object');
  if (!(propertyName in value))
    return issue(loc, 'union_tag_not_found', `Unable to extract tag using discriminator '${propertyName}'`);
  const tag = value[propertyName];
  const target = typeof tag === 'string' && Object.hasOwn(mapping, tag) ? mapping[tag] : undefined;
  if (target === undefined) {
    const expected = Object.keys(mapping)
      .map((k) => `'${k}'`)
      .join(', ');
    return issue(
      loc,
      'union_tag_invalid',
      `Input tag ${JSON.stringify(tag)} found using '${propertyName}' does not match any of the expected tags: ${expected}`,
    );
  }
  return validateNode(root, { $ref: target }, value, [...loc, tag as string]);
}

/** A union passes when one member does; `X | None` fails as X would, a wider union with each member's issues. */
function checkUnion(root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  const members = (node.anyOf ?? node.oneOf)!;
  const nonNull = members.filter((m) => resolveNode(root, m).type !== 'null');
  if (value === null && nonNull.length < members.length) return [];
  if (nonNull.length === 1) return validateNode(root, nonNull[0]!, value, loc);
  const results = nonNull.map((m) => ({ tag: memberTag(root, m), issues: validateNode(root, m, value, loc) }));
  if (results.some((r) => r.issues.length === 0)) return [];
  return results.flatMap(({ tag, issues }) =>
    issues.map((i) => ({ ...i, loc: [...loc, tag, ...i.loc.slice(loc.length)] })),
  );
}

const PY_TYPE_OF_SCHEMA: Record<string, string> = { string: 'str', integer: 'int', number: 'float', boolean: 'bool' };

function memberTag(root: TaskDataSchema, member: SchemaNode): string {
  const resolved = resolveNode(root, member);
  return resolved.title !== undefined && isModel(resolved)
    ? resolved.title
    : (PY_TYPE_OF_SCHEMA[resolved.type ?? ''] ?? resolved.type ?? 'any');
}

function checkLiteral(node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  const allowed = node.enum ?? [node.const];
  if (allowed.some((a) => a === value)) return [];
  return issue(loc, 'literal_error', `Input should be ${allowed.map((a) => JSON.stringify(a)).join(' or ')}`);
}

function checkObject(root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  const model = isModel(node);
  if (!isPlainObject(value))
    return model
      ? issue(loc, 'model_type', `Input should be a valid dictionary or instance of ${node.title ?? 'the model'}`)
      : issue(loc, 'dict_type', 'Input should be a valid dictionary');
  const out: TaskDataIssue[] = [];
  const properties = node.properties ?? {};
  const required = new Set(node.required ?? []);
  for (const [name, field] of Object.entries(properties)) {
    if (Object.hasOwn(value, name)) out.push(...validateNode(root, field, value[name], [...loc, name]));
    else if (required.has(name)) out.push(...issue([...loc, name], 'missing', 'Field required'));
  }
  const extra = node.additionalProperties;
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(properties, key)) continue;
    if (extra === false) out.push(...issue([...loc, key], 'extra_forbidden', 'Extra inputs are not permitted'));
    else if (typeof extra === 'object') out.push(...validateNode(root, extra, value[key], [...loc, key]));
  }
  return out;
}

function checkArray(root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  if (!Array.isArray(value)) return issue(loc, 'list_type', 'Input should be a valid list');
  const items = node.items;
  const out = items === undefined ? [] : value.flatMap((item, i) => validateNode(root, items, item, [...loc, i]));
  if (out.length > 0) return out;
  if (node.minItems !== undefined && value.length < node.minItems)
    return issue(
      loc,
      'too_short',
      `List should have at least ${node.minItems} items after validation, not ${value.length}`,
    );
  if (node.maxItems !== undefined && value.length > node.maxItems)
    return issue(
      loc,
      'too_long',
      `List should have at most ${node.maxItems} items after validation, not ${value.length}`,
    );
  return [];
}

function checkString(_root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  if (typeof value !== 'string') return issue(loc, 'string_type', 'Input should be a valid string');
  // Python counts code points, not UTF-16 units.
  const length = [...value].length;
  if (node.minLength !== undefined && length < node.minLength)
    return issue(loc, 'string_too_short', `String should have at least ${node.minLength} characters`);
  if (node.maxLength !== undefined && length > node.maxLength)
    return issue(loc, 'string_too_long', `String should have at most ${node.maxLength} characters`);
  if (node.pattern !== undefined && !new RegExp(node.pattern, 'u').test(value))
    return issue(loc, 'string_pattern_mismatch', `String should match pattern '${node.pattern}'`);
  return [];
}

function checkInteger(_root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  let n: number;
  if (typeof value === 'boolean') n = Number(value);
  else if (typeof value === 'number') {
    if (!Number.isInteger(value))
      return issue(loc, 'int_from_float', 'Input should be a valid integer, got a number with a fractional part');
    n = value;
  } else if (typeof value === 'string') {
    if (!INTEGER_TEXT.test(value.trim()))
      return issue(loc, 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer');
    n = Number(value.trim());
  } else return issue(loc, 'int_type', 'Input should be a valid integer');
  return checkBounds(node, n, loc);
}

function checkNumber(_root: TaskDataSchema, node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  let n: number;
  if (typeof value === 'boolean' || typeof value === 'number') n = Number(value);
  else if (typeof value === 'string') {
    n = parseFloatText(value.trim());
    if (Number.isNaN(n) && !FLOAT_WORD.test(value.trim()))
      return issue(loc, 'float_parsing', 'Input should be a valid number, unable to parse string as a number');
  } else return issue(loc, 'float_type', 'Input should be a valid number');
  return checkBounds(node, n, loc);
}

/** Python's float() of a string: "inf", "-infinity" and "nan" are numbers too. */
function parseFloatText(text: string): number {
  const word = FLOAT_WORD.exec(text);
  if (word === null) return text === '' ? Number.NaN : Number(text);
  if (word[2]!.toLowerCase() === 'nan') return Number.NaN;
  return word[1] === '-' ? -Infinity : Infinity;
}

/** Pydantic checks a number's constraints in this order and reports the first that fails. */
function checkBounds(node: SchemaNode, n: number, loc: Loc): TaskDataIssue[] {
  if (node.multipleOf !== undefined && n % node.multipleOf !== 0)
    return issue(loc, 'multiple_of', `Input should be a multiple of ${node.multipleOf}`);
  if (node.maximum !== undefined && !(n <= node.maximum))
    return issue(loc, 'less_than_equal', `Input should be less than or equal to ${node.maximum}`);
  if (node.exclusiveMaximum !== undefined && !(n < node.exclusiveMaximum))
    return issue(loc, 'less_than', `Input should be less than ${node.exclusiveMaximum}`);
  if (node.minimum !== undefined && !(n >= node.minimum))
    return issue(loc, 'greater_than_equal', `Input should be greater than or equal to ${node.minimum}`);
  if (node.exclusiveMinimum !== undefined && !(n > node.exclusiveMinimum))
    return issue(loc, 'greater_than', `Input should be greater than ${node.exclusiveMinimum}`);
  return [];
}

function checkBoolean(_root: TaskDataSchema, _node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  if (typeof value === 'boolean') return [];
  if (typeof value === 'number' && (value === 0 || value === 1)) return [];
  if (typeof value === 'string' && BOOL_WORDS.has(value.trim().toLowerCase())) return [];
  if (typeof value === 'number' || typeof value === 'string')
    return issue(loc, 'bool_parsing', 'Input should be a valid boolean, unable to interpret input');
  return issue(loc, 'bool_type', 'Input should be a valid boolean');
}

function checkNull(_root: TaskDataSchema, _node: SchemaNode, value: unknown, loc: Loc): TaskDataIssue[] {
  return value === null ? [] : issue(loc, 'none_required', `Input should be None, got ${pyTypeName(value)}`);
}

const TYPE_CHECKS: Record<string, Check> = {
  object: checkObject,
  array: checkArray,
  string: checkString,
  integer: checkInteger,
  number: checkNumber,
  boolean: checkBoolean,
  null: checkNull,
};
