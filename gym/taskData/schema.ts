import { z } from 'zod';

// A server's task-data schema as NeMo Gym 0.7.0's `gym env schema` prints it: the JSON Schema
// Pydantic writes for the server's `TaskData` model. Only the keywords Pydantic writes for the
// types task data uses are read; others are kept (loose objects) and ignored, as a reader of a
// newer Pydantic's output must.

export interface SchemaNode {
  $ref?: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  discriminator?: { propertyName: string; mapping: Record<string, string> };
  const?: unknown;
  enum?: unknown[];
  title?: string;
  legacy_location?: string;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

export const schemaNodeSchema: z.ZodType<SchemaNode> = z.lazy(() =>
  z.looseObject({
    $ref: z.string().optional(),
    type: z.string().optional(),
    properties: z.record(z.string(), schemaNodeSchema).optional(),
    required: z.array(z.string()).optional(),
    additionalProperties: z.union([z.boolean(), schemaNodeSchema]).optional(),
    items: schemaNodeSchema.optional(),
    anyOf: z.array(schemaNodeSchema).optional(),
    oneOf: z.array(schemaNodeSchema).optional(),
    discriminator: z.looseObject({ propertyName: z.string(), mapping: z.record(z.string(), z.string()) }).optional(),
    const: z.unknown().optional(),
    enum: z.array(z.unknown()).optional(),
    title: z.string().optional(),
    legacy_location: z.string().optional(),
    minLength: z.number().optional(),
    maxLength: z.number().optional(),
    pattern: z.string().optional(),
    minItems: z.number().optional(),
    maxItems: z.number().optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    exclusiveMinimum: z.number().optional(),
    exclusiveMaximum: z.number().optional(),
    multipleOf: z.number().optional(),
  }),
);

export const taskDataSchemaSchema = schemaNodeSchema.and(
  z.looseObject({ $defs: z.record(z.string(), schemaNodeSchema).optional() }),
);
export type TaskDataSchema = SchemaNode & { $defs?: Record<string, SchemaNode> };

const DEFS_PREFIX = '#/$defs/';

/** Follows `$ref`s into the schema's `$defs`; throws on a reference the schema does not define. */
export function resolveNode(root: TaskDataSchema, node: SchemaNode): SchemaNode {
  let current = node;
  for (let hops = 0; current.$ref !== undefined; hops++) {
    const name = current.$ref.startsWith(DEFS_PREFIX) ? current.$ref.slice(DEFS_PREFIX.length) : undefined;
    const target = name === undefined ? undefined : root.$defs?.[name];
    // A checked schema (unresolvableRef) never gets here with a dangling or looping reference.
    if (target === undefined || hops > 64) throw new Error(`unresolvable $ref ${current.$ref}`);
    current = target;
  }
  return current;
}

/** The first `$ref` anywhere in the schema that `resolveNode` could not follow, if any. */
export function unresolvableRef(root: TaskDataSchema): string | undefined {
  const seen = new Set<unknown>();
  const walk = (value: unknown): string | undefined => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return undefined;
    seen.add(value);
    const ref = (value as SchemaNode).$ref;
    if (typeof ref === 'string' && !(ref.startsWith(DEFS_PREFIX) && root.$defs?.[ref.slice(DEFS_PREFIX.length)]))
      return ref;
    for (const child of Object.values(value)) {
      const found = walk(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(root);
}

/** A model (Pydantic BaseModel) node, as opposed to a plain dict: it lists its properties. */
export function isModel(node: SchemaNode): boolean {
  return node.type === 'object' && node.properties !== undefined;
}

/** The model nodes a top-level schema validates with: the model itself, or a union's members. */
export function topLevelModels(root: TaskDataSchema): SchemaNode[] {
  const members = root.oneOf ?? root.anyOf;
  if (members === undefined) return isModel(root) ? [root] : [];
  return members.map((m) => resolveNode(root, m)).filter(isModel);
}

/**
 * Fields the server's wire reads only from inside `verifier_metadata` (annotated
 * `legacy_location: verifier_metadata`): a row carrying one only at the top level is misplaced.
 */
export function legacyMetadataFields(root: TaskDataSchema): Set<string> {
  const names = new Set<string>();
  for (const model of topLevelModels(root))
    for (const [name, field] of Object.entries(model.properties ?? {}))
      if (field.legacy_location === 'verifier_metadata') names.add(name);
  return names;
}
