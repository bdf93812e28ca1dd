import { judgeDocumentOperation } from '../../schema/judge.js';
import { readRequestBody } from '../http/request-body.js';
import { admit } from './admit.js';
import { checkBulkParameters, runBulkChunk, type BulkOperation } from './bulk-handler.js';
import { parseDocumentPath, type DocumentRoute } from './document-path.js';
import type { ClusterStore } from './document-store.js';
import { answer } from './run-admitted.js';
import { parseFieldSet } from './field-set.js';
import type { DocumentRequest } from './handler-state.js';
import { compileCondition, parseOperationBody, parseUpdateBody, type PreparedOperation } from './operations.js';
import { QueryParameters } from './query-parameters.js';
import { methodNotAllowed, notFound, refuseBody, reply, replyError } from './replies.js';
import { badRequest, HandlerError, handlerErrorBody, idBody } from './responses.js';
import { applyUpdate } from './update-ops.js';
import {
  buildScope,
  checkDocumentType,
  defaultClusterName,
  parseTimeoutMs,
  parseTraceLevel,
  resolveCluster,
  type ScopeContext,
} from './visit-plan.js';
import { parseVisitParameters, visitPlain, visitStreamed } from './visit-handler.js';
import { fieldsRenderer, requestedTensorEncoding } from './tensor-rendering.js';

/** /document/v1: the route and method checked, the body read, the operation prepared, then admitted. */

const collectionMethods = ['GET', 'POST', 'PUT', 'DELETE'];
const rootMethods = ['GET', 'POST', 'DELETE'];

const defaultBulkTimeChunkMs = 60_000;

const documentApiMissing =
  'Document API is not configured in this cluster. See https://docs.vespa.ai/en/reference/services/container.html#document-api';

export function documentApi(request: DocumentRequest, queryString: string): void {
  const { state, req, res, pathId } = request;
  if (state.model !== null && !state.model.documentApi) {
    // A container without <document-api> serves /document/v1 with a handler that only says so.
    if (!req.readableEnded) req.resume();
    reply(request, 404, handlerErrorBody(pathId, documentApiMissing));
    return;
  }
  const route = parseDocumentPath(pathId);
  if (route.kind === 'none') {
    notFound(request);
    return;
  }
  const method = req.method ?? 'GET';
  const allowed = route.kind === 'root' ? rootMethods : collectionMethods;
  if (!allowed.includes(method)) {
    if (method === 'OPTIONS') {
      res.writeHead(204, { allow: allowed.join(',') });
      res.end();
    } else {
      methodNotAllowed(request, allowed);
    }
    return;
  }
  const query = new QueryParameters(queryString);
  if (route.kind === 'document' && method !== 'GET' && query.has('dryRun')) {
    try {
      if (dryRunAnswered(request, route.id, query)) return;
    } catch (err) {
      if (!req.readableEnded) req.resume();
      replyError(request, err);
      return;
    }
  }
  const withBody = method === 'POST' || method === 'PUT';
  const dispatch = (body: Buffer | undefined): void => {
    try {
      if (route.kind === 'document') documentOperation(request, route, query, body);
      else collectionOperation(request, route, query, body);
    } catch (err) {
      replyError(request, err);
    }
  };
  // Copy (POST on a collection) has no body; everything else that writes reads one.
  if (withBody && !(method === 'POST' && route.kind !== 'document'))
    readRequestBody(req, state.maxBodyBytes, dispatch, refuseBody, request);
  else {
    if (!req.readableEnded) req.resume();
    dispatch(undefined);
  }
}

/**
 * A dry run is answered before the body is read: only the path, the timeout and dryRun itself are checked, not
 * the document type, the cluster or the body (the official `vespa feed --speedtest` relies on it).
 */
function dryRunAnswered(request: DocumentRequest, id: string, query: QueryParameters): boolean {
  parseTimeoutMs(query);
  if (query.boolean('dryRun') !== true) return false;
  if (!request.req.readableEnded) request.req.resume();
  reply(request, 200, idBody(request.pathId, id));
  return true;
}

function documentOperation(
  request: DocumentRequest,
  route: Extract<DocumentRoute, { kind: 'document' }>,
  query: QueryParameters,
  body: Buffer | undefined,
): void {
  const { state, req, pathId } = request;
  // A get refuses dryRun before it looks at anything else.
  if (req.method === 'GET') query.disallow(pathId, 'dryRun');
  const judged = state.model !== null && (req.method === 'POST' || req.method === 'PUT');
  // With a package deployed, the document parser says which types exist (judge.ts); without, any type goes.
  if (!judged) checkDocumentType(state.documentTypes, route.type);
  // Without 'cluster', single-document operations go where the default route sends their type.
  const cluster = resolveCluster(state.store, query.string('cluster') ?? defaultClusterName(state.store, route.type));
  const id = route.id;
  const traceLevel = parseTraceLevel(query);
  const timeoutMs = parseTimeoutMs(query);
  query.string('route');
  const dryRun = query.boolean('dryRun') ?? false;
  let op: PreparedOperation;
  const common = { pathId, id, cluster, traceLevel, timeoutMs };
  switch (req.method) {
    case 'GET':
      op = {
        kind: 'get',
        ...common,
        fieldSet: parseFieldSet(query.string('fieldSet')),
        render: fieldsRenderer(state.model, requestedTensorEncoding(query.queryString)),
      };
      break;
    case 'POST': {
      if (judged) {
        op = judgedOperation(request, 'put', route, query, body!, { cluster, traceLevel, timeoutMs, dryRun });
        break;
      }
      const parsed = parseOperationBody(body!.toString('utf8'), { kind: 'put', id, docType: route.type });
      const { fields } = parsed;
      const { condition, create } = conditionAndCreate(query, parsed.condition, parsed.create);
      const matcher = condition === undefined ? undefined : compileCondition(state.selections, condition);
      op = {
        kind: 'put',
        ...common,
        fields,
        fieldsJson: parsed.fieldsJson,
        condition,
        matcher,
        create,
        dryRun,
      };
      break;
    }
    case 'PUT': {
      if (judged) {
        op = judgedOperation(request, 'update', route, query, body!, { cluster, traceLevel, timeoutMs, dryRun });
        break;
      }
      const parsed = parseUpdateBody(body!.toString('utf8'), { kind: 'update', id, docType: route.type });
      const { fields } = parsed;
      applyUpdate({}, fields); // Validates the operations (unknown ones are a 400) before admission.
      const { condition, create } = conditionAndCreate(query, parsed.condition, parsed.create);
      op = {
        kind: 'update',
        ...common,
        fields,
        condition,
        matcher: compileCondition(state.selections, condition),
        create,
        dryRun,
      };
      break;
    }
    default: {
      const condition = query.string('condition');
      op = {
        kind: 'remove',
        ...common,
        condition,
        matcher: compileCondition(state.selections, condition),
        dryRun,
      };
    }
  }
  // The handler estimates an operation's size as the bytes of its body.
  admit(request, { id, write: op.kind !== 'get', timeoutMs, work: op, bytes: body?.length ?? 0 });
}

interface OperationSettings {
  cluster: PreparedOperation['cluster'];
  traceLevel: number;
  timeoutMs: number;
  dryRun: boolean;
}

/** The query's condition and create override the body's, as in the service (after the body is parsed). */
function conditionAndCreate(
  query: QueryParameters,
  bodyCondition: string | undefined,
  bodyCreate: boolean | undefined,
): { condition: string | undefined; create: boolean } {
  return {
    condition: query.string('condition') ?? bodyCondition,
    create: query.boolean('create') ?? bodyCreate ?? false,
  };
}

/** A put or update judged against the deployed schema; what is stored is the text it was given. */
function judgedOperation(
  request: DocumentRequest,
  kind: 'put' | 'update',
  route: Extract<DocumentRoute, { kind: 'document' }>,
  query: QueryParameters,
  body: Buffer,
  settings: OperationSettings,
): PreparedOperation {
  const { state, pathId } = request;
  const text = body.toString('utf8');
  const verdict = judgeDocumentOperation(state.model!, kind, route.id, route.type, text);
  if (!verdict.ok) throw new HandlerError(verdict.status, verdict.message);
  const fields = verdict.body.fields!;
  const { condition, create } = conditionAndCreate(query, verdict.body.condition, verdict.body.create);
  const matcher = compileCondition(state.selections, condition);
  const common = {
    pathId,
    id: route.id,
    ...settings,
    condition,
    matcher,
    create,
    ignoredFields: verdict.ignoredFields,
  };
  const type = state.model!.types.get(route.type)!;
  // Skipped undefined fields (ignore-undefined-fields) are not stored; the rest is kept as the text it was.
  const fieldsText = verdict.ignoredFields
    ? `{${fields.entries
        .filter(([name]) => type.fields.has(name) || (kind === 'update' && /[.[{]/.test(name)))
        .map(([name, value]) => `${JSON.stringify(name)}:${text.slice(value.start, value.end)}`)
        .join(',')}}`
    : text.slice(fields.start, fields.end);
  if (kind === 'put') return { kind: 'put', ...common, fields: {}, fieldsJson: fieldsText };
  const updates = parseUpdateBody(`{"fields":${fieldsText}}`, { kind, id: route.id, docType: route.type }).fields;
  applyUpdate({}, updates); // The simulator's own update rules (field paths) on top of the parser's.
  return { kind: 'update', ...common, fields: updates };
}

function collectionOperation(
  request: DocumentRequest,
  route: Extract<DocumentRoute, { kind: 'root' | 'collection' }>,
  query: QueryParameters,
  body: Buffer | undefined,
): void {
  const { state, req, res, pathId } = request;
  const scopeContext: ScopeContext = {
    store: state.store,
    globalTypes: state.globalTypes,
    documentTypes: state.documentTypes,
    selections: state.selections,
  };
  // Visits and the bulk operations refuse dryRun before anything else.
  query.disallow(pathId, 'dryRun');
  if (req.method === 'GET') {
    const wantedCluster = query.string('cluster');
    if (route.kind === 'root' && wantedCluster === undefined)
      throw badRequest(
        "Must set 'cluster' parameter to a valid content cluster id when visiting at a root /document/v1/ level",
      );
    const params = parseVisitParameters(
      query,
      req.headers.accept,
      fieldsRenderer(state.model, requestedTensorEncoding(query.queryString)),
    );
    const scope = buildScope(scopeContext, route, query, pathId, resolveCluster(state.store, wantedCluster));
    const settings = {
      chunkDocuments: state.visitChunkDocuments,
      cutStreamAfterDocuments: state.faults.current.cutStreamAfterDocuments,
      cost: state.visitCost,
    };
    const visit = (): Promise<void> => {
      if (!params.stream) {
        return visitPlain(res, scope, params, settings).then(() => {
          if (state.log !== undefined) state.log(`${req.method} ${req.url} 200`);
        });
      }
      return visitStreamed(res, scope, params, settings).then((status) => {
        if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (streamed)`);
      });
    };
    admit(request, { id: undefined, write: false, timeoutMs: scope.timeoutMs, work: visit, bytes: 0 });
    return;
  }

  // The service's order of checks differs between the three (bulk-handler.ts).
  let operation: BulkOperation;
  let cluster: ClusterStore;
  if (req.method === 'POST') {
    const destination = resolveCluster(state.store, query.require('destinationCluster', pathId));
    cluster = resolveCluster(state.store, checkBulkParameters(query, pathId));
    operation = { kind: 'copy', destination };
  } else if (req.method === 'PUT') {
    cluster = resolveCluster(state.store, query.require('cluster', pathId));
    checkBulkParameters(query, pathId);
    operation = { kind: 'update', fields: undefined }; // The body is read last, as the service reads it.
  } else {
    cluster = resolveCluster(state.store, checkBulkParameters(query, pathId));
    operation = { kind: 'delete' };
  }
  const scope = buildScope(scopeContext, route, query, pathId, cluster);
  const timeChunkMs = query.durationMs('timeChunk') ?? defaultBulkTimeChunkMs;
  if (operation.kind === 'update') {
    if (route.kind !== 'collection') throw badRequest('Document type must be specified for mass updates');
    // The update is read as one for a document of the path's type with an empty id.
    const parsed = parseUpdateBody(body!.toString('utf8'), {
      kind: 'update',
      id: `id:dummy:${route.type}::`,
      docType: route.type,
    });
    applyUpdate({}, parsed.fields);
    operation.fields = parsed.fields;
  }
  const run = (): void => answer(request, 200, runBulkChunk(scope, operation, state.visitChunkDocuments, timeChunkMs));
  admit(request, { id: undefined, write: true, timeoutMs: scope.timeoutMs, work: run, bytes: body?.length ?? 0 });
}
