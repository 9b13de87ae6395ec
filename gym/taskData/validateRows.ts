import { isModel, legacyMetadataFields, resolveNode, topLevelModels, type TaskDataSchema } from './schema';
import { isPlainObject, pyEquals, pyTypeName } from './pyValues';
import { validateNode, type TaskDataIssue } from './validateValue';

// Task rows checked against their server's task-data schema as NeMo Gym 0.7.0's
// `ng_prepare_data +task_data_validation=...` checks them: the framework's own keys are dropped,
// `verifier_metadata` and `task_data` contents are read as top-level fields (the schema is flat),
// materialized rows (`task_id` object + `task_input`) are read from `task_input`, and a row is
// reported for schema issues, for keys the schema does not declare, for keys whose two placements
// disagree, and for fields its wire reads only from `verifier_metadata` found only at the top.

/** Keys the framework owns; never part of a server's task data. */
const RESERVED_ROW_KEYS = new Set([
  'responses_create_params',
  'agent_ref',
  'task_source',
  '_ng_task_index',
  '_ng_rollout_index',
]);
const LEGACY_METADATA_KEY = 'verifier_metadata';
const TASK_DATA_KEY = 'task_data';

/** What one file's rows showed; `lines` of the counted keys are the rows' 1-based line numbers. */
export interface TaskDataReport {
  rows: number;
  /** Each row that failed, with its issues. */
  errorRows: { line: number; issues: TaskDataIssue[] }[];
  unknownKeys: Map<string, number[]>;
  conflictingKeys: Map<string, number[]>;
  misplacedKeys: Map<string, number[]>;
}

export function emptyTaskDataReport(): TaskDataReport {
  return { rows: 0, errorRows: [], unknownKeys: new Map(), conflictingKeys: new Map(), misplacedKeys: new Map() };
}

/** 0.7.0's verdict: any failed row or any counted key makes a file unclean. */
export function isClean(report: TaskDataReport): boolean {
  return (
    report.errorRows.length === 0 &&
    report.unknownKeys.size === 0 &&
    report.conflictingKeys.size === 0 &&
    report.misplacedKeys.size === 0
  );
}

function count(keys: Map<string, number[]>, key: string, line: number): void {
  const lines = keys.get(key);
  if (lines) lines.push(line);
  else keys.set(key, [line]);
}

export class TaskDataValidator {
  readonly report = emptyTaskDataReport();
  private readonly legacyFields: Set<string>;

  constructor(private readonly schema: TaskDataSchema) {
    this.legacyFields = legacyMetadataFields(schema);
  }

  /** Checks one parsed row (a JSON object) read from `line`. */
  validateRow(line: number, row: Record<string, unknown>): void {
    this.report.rows++;
    const envelope = this.unwrapMaterialized(line, row);
    if (envelope === undefined) return;
    const { fields, migrated } = envelope;
    if (this.legacyFields.size > 0 && !migrated && !(TASK_DATA_KEY in fields)) {
      const nested = fields[LEGACY_METADATA_KEY];
      for (const key of Object.keys(fields))
        if (this.legacyFields.has(key) && !(isPlainObject(nested) && key in nested))
          count(this.report.misplacedKeys, key, line);
    }
    const subject = this.normalize(line, fields);
    const issues = validateNode(this.schema, this.schema, subject, []);
    if (issues.length > 0) {
      this.report.errorRows.push({ line, issues });
      return;
    }
    for (const key of this.undeclaredKeys(subject)) count(this.report.unknownKeys, key, line);
  }

  /**
   * A materialized row's task fields are its `task_input` (with `task_data` inside it read first);
   * any other row is its own. Undefined when the envelope is malformed (counted as a failed row).
   */
  private unwrapMaterialized(
    line: number,
    row: Record<string, unknown>,
  ): { fields: Record<string, unknown>; migrated: boolean } | undefined {
    if (!(isPlainObject(row.task_id) && 'task_input' in row)) return { fields: row, migrated: false };
    const taskInput = row.task_input;
    const malformed = (loc: string, value: unknown) => {
      const msg = `${loc} must be an object, got ${pyTypeName(value)}`;
      this.report.errorRows.push({ line, issues: [{ loc: [loc], type: 'envelope', msg }] });
      return undefined;
    };
    if (!isPlainObject(taskInput)) return malformed('task_input', taskInput);
    const taskData = taskInput[TASK_DATA_KEY];
    if (TASK_DATA_KEY in taskInput && !isPlainObject(taskData)) return malformed('task_input.task_data', taskData);
    const fields: Record<string, unknown> = { ...(taskData as Record<string, unknown> | undefined) };
    for (const [key, value] of Object.entries(taskInput)) {
      if (key === TASK_DATA_KEY) continue;
      if (key in fields && !pyEquals(fields[key], value)) count(this.report.conflictingKeys, key, line);
      else fields[key] = value;
    }
    return { fields, migrated: TASK_DATA_KEY in taskInput };
  }

  /** The task-owned fields, flat: framework keys dropped, both containers' contents spliced up. */
  private normalize(line: number, row: Record<string, unknown>): Record<string, unknown> {
    const fields = Object.fromEntries(Object.entries(row).filter(([k]) => !RESERVED_ROW_KEYS.has(k)));
    for (const containerKey of [LEGACY_METADATA_KEY, TASK_DATA_KEY]) {
      const container = fields[containerKey];
      delete fields[containerKey];
      if (isPlainObject(container)) {
        for (const [key, value] of Object.entries(container)) {
          if (key in fields && !pyEquals(fields[key], value)) count(this.report.conflictingKeys, key, line);
          else fields[key] = value;
        }
      } else if (container !== undefined && container !== null) {
        // Malformed; the schema says what is wrong with it.
        fields[containerKey] = container;
      }
    }
    return fields;
  }

  /** Keys the validated model keeps as extras (`extra="allow"`); a model that ignores or forbids them has none. */
  private undeclaredKeys(subject: Record<string, unknown>): string[] {
    const model = this.selectedModel(subject);
    if (model?.additionalProperties !== true) return [];
    return Object.keys(subject).filter((k) => !Object.hasOwn(model.properties ?? {}, k));
  }

  private selectedModel(subject: Record<string, unknown>) {
    const root = this.schema;
    if (isModel(root)) return root;
    const { discriminator } = root;
    if (discriminator !== undefined) {
      const target = discriminator.mapping[String(subject[discriminator.propertyName])];
      return target === undefined ? undefined : resolveNode(root, { $ref: target });
    }
    return topLevelModels(root).find((m) => validateNode(root, m, subject, []).length === 0);
  }
}
