import { parseFieldSet, projectFields, type FieldSet } from './field-set.js';
import { readOperationEnvelope } from '../../schema/judge.js';
import { documentBody, HandlerError, idBody, storageErrorBody, traceJson } from './responses.js';
import { matches, type Matcher, type SelectionCache } from './selection-cache.js';
import { exactFieldsOf, fieldsJsonOf, fieldsOf, type ClusterStore } from './document-store.js';
import { parseExact, stringifyExact } from './exact-json.js';
import { applyUpdate } from './update-ops.js';
import type { FieldsRenderer } from './tensor-rendering.js';

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
  | { kind: 'get'; fieldSet: FieldSet; render?: FieldsRenderer }
  | {
      kind: 'put';
      fields: Record<string, unknown>;
      fieldsJson: string | undefined;
      condition?: string;
      matcher?: Matcher;
      create: boolean;
      dryRun: boolean;
      ignoredFields?: boolean;
    }
  | {
      kind: 'update';
      fields: unknown;
      condition?: string;
      matcher?: Matcher;
      create: boolean;
      dryRun: boolean;
      ignoredFields?: boolean;
    }
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
  fields: Record<string, unknown>;
  condition?: string;
  create?: boolean;
  /** For a put: the raw text of `fields` when it can be stored as is (saves a serialization per document). */
  fieldsJson?: string;
}

/** Where a body goes and what it is, for the parser's messages. */
export interface BodyContext {
  kind: 'put' | 'update';
  id: string;
  docType: string;
}

/**
 * Parses a put body as the service's document parser reads it without a schema: `fields` required, `condition`
 * and `create` taken, any other top-level key skipped. A body that is not all that is a 400 with the parser's
 * message.
 */
export function parseOperationBody(text: string, context: BodyContext): ParsedBody {
  const { body, onlyFields } = wellFormed(text, JSON.parse, context);
  // The established feeders send exactly {"fields":<raw>}: the raw text is then the fields' JSON, kept as is
  // when it is one line and "fields" appears only once (a repeated key would leave two values in the slice).
  if (
    onlyFields &&
    text.startsWith('{"fields":') &&
    text.endsWith('}') &&
    text.indexOf('\n') < 0 &&
    text.indexOf('\r') < 0 &&
    text.indexOf('"fields"', 10) < 0
  )
    body.fieldsJson = text.slice(10, -1);
  return body;
}

/** An update body with its numbers as written (exact-json.ts), so an assigned long beyond 2^53 keeps its text. */
export function parseUpdateBody(text: string, context: BodyContext): ParsedBody {
  return wellFormed(text, parseExact, context).body;
}

/**
 * The common case is read with `parse` alone; anything it refuses, or a shape the parser would refuse, goes to
 * the parser's own reading (judge.ts), which says what the service says, or (for what it accepts) gives the body.
 * `onlyFields`: the body held nothing but `fields`.
 */
function wellFormed(
  text: string,
  parse: (text: string) => unknown,
  context: BodyContext,
): { body: ParsedBody; onlyFields: boolean } {
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch {
    parsed = undefined;
  }
  if (isObject(parsed) && isObject(parsed.fields)) {
    const { fields, condition, create } = parsed;
    if (
      (condition === undefined || condition === null || typeof condition === 'string') &&
      (create === undefined || typeof create === 'boolean')
    ) {
      let onlyFields = true;
      for (const key in parsed) if (key !== 'fields') onlyFields = false;
      const body: ParsedBody = { fields };
      if (typeof condition === 'string') body.condition = condition;
      if (create !== undefined) body.create = create;
      return { body, onlyFields };
    }
  }
  const envelope = readOperationEnvelope(null, context.kind, context.id, context.docType, text);
  if (!envelope.ok) throw new HandlerError(envelope.status, envelope.message);
  const { fields, condition, create } = envelope.body;
  const body: ParsedBody = { fields: parse(text.slice(fields.start, fields.end)) as Record<string, unknown> };
  if (condition !== undefined) body.condition = condition;
  if (create !== undefined) body.create = create;
  return { body, onlyFields: false };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function compileCondition(selections: SelectionCache, condition: string | undefined): Matcher | undefined {
  return condition === undefined ? undefined : selections.compile(condition, 'condition');
}

export { parseFieldSet };

const conditionFailed = 'ReturnCode(TEST_AND_SET_CONDITION_FAILED, Condition did not match document)';
const conditionMissing = 'ReturnCode(TEST_AND_SET_CONDITION_FAILED, Document does not exist)';

export function executeOperation(op: PreparedOperation): StoredOperationResult {
  const { cluster, id, pathId } = op;
  switch (op.kind) {
    case 'get': {
      const entry = cluster.document(id);
      const trace = traceJson(op.traceLevel, [
        `get ${id} from cluster '${cluster.name}': ${entry ? 'found' : 'not found'}`,
      ]);
      if (entry === undefined) return { status: 404, body: idBody(pathId, id, trace) };
      const projected =
        op.fieldSet.kind === 'all' ? fieldsJsonOf(entry) : JSON.stringify(projectFields(fieldsOf(entry), op.fieldSet));
      const fields = op.render === undefined ? projected : op.render(entry.type, projected);
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
          return {
            status: 200,
            body: idBody(pathId, id, traceJson(op.traceLevel, [`update ${id}: document not found`])),
          };
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
      return {
        status: 200,
        body: idBody(pathId, id, traceJson(op.traceLevel, [`remove ${id} from cluster '${cluster.name}'`])),
      };
    }
  }
}
