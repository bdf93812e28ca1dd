import { parseFieldSet, projectFields, type FieldSet } from './field-set.js';
import { badRequest, documentBody, idBody, storageErrorBody, traceJson } from './responses.js';
import { matches, type Matcher, type SelectionCache } from './selection-cache.js';
import { exactFieldsOf, fieldsJsonOf, fieldsOf, type ClusterStore } from './document-store.js';
import { parseExact, stringifyExact } from './exact-json.js';
import { applyUpdate } from './update-ops.js';

/**
 * Single-document get, put, update and remove: validated into a PreparedOperation before the operation is
 * admitted (so bad input never queues), then executed against a cluster's store.
 */
export type PreparedOperation = {
  pathId: string;
  id: string;
  cluster: ClusterStore;
  traceLevel: number;
  timeoutMs: number;
} & (
  | { kind: 'get'; fieldSet: FieldSet }
  | { kind: 'put'; fields: Record<string, unknown>; fieldsJson: string | undefined; condition?: string; matcher?: Matcher; create: boolean; dryRun: boolean; ignoredFields?: boolean }
  | { kind: 'update'; fields: unknown; condition?: string; matcher?: Matcher; create: boolean; dryRun: boolean; ignoredFields?: boolean }
  | { kind: 'remove'; condition?: string; matcher?: Matcher; dryRun: boolean }
);

export interface StoredOperationResult {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

/** Undefined fields were skipped (ignore-undefined-fields): the service says so in a header. */
const ignoredFieldsHeaders = { 'x-vespa-ignored-fields': 'true' };

export interface ParsedBody {
  fields?: unknown;
  condition?: unknown;
  create?: unknown;
  /** For a put: the raw text of `fields` when it can be stored as is (saves a serialization per document). */
  fieldsJson?: string;
}

const allowedBodyKeys = new Set(['fields', 'condition', 'create']);

/** Parses a put/update body; 400 naming the problem for bad JSON or unexpected content. */
export function parseOperationBody(text: string): ParsedBody {
  if (text.length === 0) throw badRequest('Failed parsing JSON: the request body is empty');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badRequest(`Failed parsing JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest('Failed parsing JSON: expected a JSON object');
  const body = parsed as ParsedBody;
  let keys = 0;
  for (const key in body) {
    if (!allowedBodyKeys.has(key)) throw badRequest(`Unknown key '${key}' in request body: expected 'fields', 'condition' or 'create'`);
    keys++;
  }
  if (body.condition !== undefined && typeof body.condition !== 'string') throw badRequest("'condition' must be a string");
  if (body.create !== undefined && typeof body.create !== 'boolean') throw badRequest("'create' must be true or false");
  // The established feeders send exactly {"fields":<raw>}: the raw text is then the fields' JSON, kept as is
  // when it is one line and "fields" appears only once (a repeated key would leave two values in the slice).
  if (
    keys === 1 &&
    body.fields !== undefined &&
    text.startsWith('{"fields":') &&
    text.endsWith('}') &&
    text.indexOf('\n') < 0 &&
    text.indexOf('\r') < 0 &&
    text.indexOf('"fields"', 10) < 0
  )
    body.fieldsJson = text.slice(10, -1);
  return body;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function requireFieldsObject(body: ParsedBody, what: string): Record<string, unknown> {
  if (body.fields === undefined) throw badRequest(`Missing 'fields' in ${what}: expected {"fields": {...}}`);
  if (!isObject(body.fields)) throw badRequest(`'fields' in ${what} must be a JSON object`);
  return body.fields;
}

export function compileCondition(selections: SelectionCache, condition: string | undefined): Matcher | undefined {
  return condition === undefined ? undefined : selections.compile(condition, 'condition');
}

export { parseFieldSet };

/** An update body with its numbers as written (exact-json.ts), so an assigned long beyond 2^53 keeps its text. */
export function parseUpdateBody(text: string): ParsedBody {
  if (text.length === 0) throw badRequest('Failed parsing JSON: the request body is empty');
  let parsed: unknown;
  try {
    parsed = parseExact(text);
  } catch (err) {
    throw badRequest(`Failed parsing JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest('Failed parsing JSON: expected a JSON object');
  const body = parsed as ParsedBody;
  for (const key in body) if (!allowedBodyKeys.has(key)) throw badRequest(`Unknown key '${key}' in request body: expected 'fields', 'condition' or 'create'`);
  if (body.condition !== undefined && typeof body.condition !== 'string') throw badRequest("'condition' must be a string");
  if (body.create !== undefined && typeof body.create !== 'boolean') throw badRequest("'create' must be true or false");
  return body;
}

const conditionFailed = 'ReturnCode(TEST_AND_SET_CONDITION_FAILED, Condition did not match document)';
const conditionMissing = 'ReturnCode(TEST_AND_SET_CONDITION_FAILED, Document does not exist)';

export function executeOperation(op: PreparedOperation): StoredOperationResult {
  const { cluster, id, pathId } = op;
  switch (op.kind) {
    case 'get': {
      const entry = cluster.document(id);
      const trace = traceJson(op.traceLevel, [`get ${id} from cluster '${cluster.name}': ${entry ? 'found' : 'not found'}`]);
      if (entry === undefined) return { status: 404, body: idBody(pathId, id, trace) };
      const fields = op.fieldSet.kind === 'all' ? fieldsJsonOf(entry) : JSON.stringify(projectFields(fieldsOf(entry), op.fieldSet));
      return { status: 200, body: documentBody(pathId, id, fields, trace) };
    }
    case 'put': {
      if (op.matcher !== undefined) {
        const existing = cluster.document(id);
        // put+create+condition writes a missing document without checking the condition.
        if (existing === undefined) {
          if (!op.create) return { status: 412, body: storageErrorBody(pathId, id, conditionMissing) };
        } else if (!matches(op.matcher, existing)) {
          return { status: 412, body: storageErrorBody(pathId, id, conditionFailed) };
        }
      }
      if (!op.dryRun) cluster.put(id, op.fields, cluster.clock.now(), op.fieldsJson);
      const body = idBody(pathId, id, traceJson(op.traceLevel, [`put ${id} to cluster '${cluster.name}'`]));
      return op.ignoredFields ? { status: 200, body, headers: ignoredFieldsHeaders } : { status: 200, body };
    }
    case 'update': {
      const existing = cluster.document(id);
      if (existing === undefined) {
        if (!op.create) {
          if (op.matcher !== undefined) return { status: 412, body: storageErrorBody(pathId, id, conditionMissing) };
          return { status: 200, body: idBody(pathId, id, traceJson(op.traceLevel, [`update ${id}: document not found`])) };
        }
      } else if (op.matcher !== undefined && !matches(op.matcher, existing)) {
        return { status: 412, body: storageErrorBody(pathId, id, conditionFailed) };
      }
      // The stored text is read with its numbers as written and written back the same way, so fields the
      // update does not touch keep their exact text (a long beyond 2^53 included).
      const updated = applyUpdate(existing === undefined ? {} : exactFieldsOf(existing), op.fields);
      if (!op.dryRun) cluster.put(id, undefined, cluster.clock.now(), stringifyExact(updated));
      const body = idBody(pathId, id, traceJson(op.traceLevel, [`update ${id} in cluster '${cluster.name}'`]));
      return op.ignoredFields ? { status: 200, body, headers: ignoredFieldsHeaders } : { status: 200, body };
    }
    case 'remove': {
      if (op.matcher !== undefined) {
        const existing = cluster.document(id);
        if (existing === undefined) return { status: 412, body: storageErrorBody(pathId, id, conditionMissing) };
        if (!matches(op.matcher, existing)) return { status: 412, body: storageErrorBody(pathId, id, conditionFailed) };
      }
      if (!op.dryRun) cluster.remove(id);
      return { status: 200, body: idBody(pathId, id, traceJson(op.traceLevel, [`remove ${id} from cluster '${cluster.name}'`])) };
    }
  }
}
