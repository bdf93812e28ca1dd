import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { gunzipSync } from 'node:zlib';
import { checkBulkParameters, runBulkChunk, type BulkOperation } from './bulk.js';
import { parseDocumentPath, type DocumentRoute } from './document-path.js';
import { feedBlockMessage, garbageBodies, injectedErrorMessage, maxQueueAgeMs, validateFaultPatch, type Faults } from './faults.js';
import { parseFieldSet } from './field-set.js';
import { destroyConnection, isGone, sendJson, sendThenCut, writeChunk, type AnyResponse } from './http-response.js';
import { compileCondition, executeOperation, parseOperationBody, requireFieldsObject, type PreparedOperation } from './operations.js';
import { QueryParameters } from './query.js';
import { HandlerError, badRequest, handlerErrorBody, idBody, jsonContentType, storageErrorBody } from './responses.js';
import type { DocumentStore } from './store.js';
import { applyUpdate } from './update-ops.js';
import { buildScope, checkDocumentType, parseTimeoutMs, parseTraceLevel, resolveCluster, type ScopeContext } from './visit-plan.js';
import { parseVisitParameters, visitPlain, visitStreamed } from './visit.js';

/**
 * The request dispatcher for one simulated container: /document/v1 (the document API), `/` (the handler
 * listing the official CLI checks), a health page, and the simulator's own admin paths under /_sim/.
 */
export interface HandlerState {
  store: DocumentStore;
  faults: Faults;
  /** null: any document type is accepted (nothing deployed yet). */
  documentTypes: Set<string> | null;
  globalTypes: Set<string>;
  maxBodyBytes: number;
  visitChunkDocuments: number;
  log: ((line: string) => void) | undefined;
}

type AnyRequest = IncomingMessage | Http2ServerRequest;

/** What an admitted request does: a single-document operation, or a visit/bulk run (possibly async). */
type Work = PreparedOperation | (() => void | Promise<void>);

const kBody = Symbol('body');

interface BodyState {
  chunks: Buffer[];
  size: number;
  failed: boolean;
  max: number;
  res: AnyResponse;
  pathId: string;
  onBody: (body: Buffer) => void;
  onTooLarge: (req: AnyRequest, res: AnyResponse, pathId: string, size: string) => void;
  onBadEncoding: (req: AnyRequest, res: AnyResponse, pathId: string, message: string) => void;
}

type BodyCarrier = AnyRequest & { [kBody]?: BodyState };

function onBodyData(this: BodyCarrier, chunk: Buffer): void {
  const b = this[kBody]!;
  if (b.failed) return;
  b.size += chunk.length;
  if (b.size > b.max) {
    b.failed = true;
    b.chunks.length = 0;
    b.onTooLarge(this, b.res, b.pathId, `more than ${b.max}`);
    leaveConnection(this);
    return;
  }
  b.chunks.push(chunk);
}

function onBodyEnd(this: BodyCarrier): void {
  const b = this[kBody]!;
  this[kBody] = undefined;
  if (!b.failed) finishBody(this, b);
  leaveConnection(this);
}

function finishBody(req: BodyCarrier, b: BodyState): void {
  let body = b.chunks.length === 1 ? b.chunks[0]! : Buffer.concat(b.chunks, b.size);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding !== 'identity') {
    if (encoding.toLowerCase() !== 'gzip') {
      b.onBadEncoding(req, b.res, b.pathId, `Unsupported Content-Encoding '${encoding}'`);
      return;
    }
    try {
      body = gunzipSync(body, { maxOutputLength: b.max });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') b.onTooLarge(req, b.res, b.pathId, `more than ${b.max} (decompressed)`);
      else b.onBadEncoding(req, b.res, b.pathId, `Failed decompressing gzip request body: ${(err as Error).message}`);
      return;
    }
  }
  b.onBody(body);
}

function onBodyError(this: BodyCarrier): void {
  const b = this[kBody];
  if (b !== undefined) b.failed = true;
  leaveConnection(this);
}

/*
 * Per-connection order for HTTP/1.1 pipelining. Node parses every pipelined request at once, and a GET right
 * behind a POST would run before the POST's body has arrived. The container handles a connection's requests
 * one after the other, so a request that arrives while an earlier one on its connection still reads its body
 * waits for it.
 */
const kBusy = Symbol('busy');
const kWaiting = Symbol('waiting');

type Start = (req: AnyRequest, res: AnyResponse) => void;

interface OrderedSocket {
  [kBusy]?: AnyRequest | undefined;
  [kWaiting]?: Array<[Start, AnyRequest, AnyResponse]>;
}

function connectionOf(req: AnyRequest): OrderedSocket | undefined {
  return req.httpVersionMajor === 1 ? (req.socket as unknown as OrderedSocket) : undefined;
}

/** Runs `start` now, or after the earlier requests on the same connection have their bodies. */
function enterConnection(start: Start, req: AnyRequest, res: AnyResponse): void {
  const conn = connectionOf(req);
  if (conn !== undefined && conn[kBusy] !== undefined) (conn[kWaiting] ??= []).push([start, req, res]);
  else start(req, res);
}

/** Marks the request's connection busy while its body is read. */
function holdConnection(req: AnyRequest): void {
  const conn = connectionOf(req);
  if (conn !== undefined) conn[kBusy] = req;
}

function leaveConnection(req: AnyRequest): void {
  const conn = connectionOf(req);
  if (conn === undefined || conn[kBusy] !== req) return;
  conn[kBusy] = undefined;
  const waiting = conn[kWaiting];
  while (waiting !== undefined && waiting.length > 0 && conn[kBusy] === undefined) {
    const [start, nextReq, nextRes] = waiting.shift()!;
    start(nextReq, nextRes);
  }
}

const collectionMethods = ['GET', 'POST', 'PUT', 'DELETE'];
const rootMethods = ['GET', 'POST', 'DELETE'];

const handlerPaths = [
  '/document/v1/',
  '/document/v1/{namespace}/{documentType}/docid/',
  '/document/v1/{namespace}/{documentType}/group/{group}/',
  '/document/v1/{namespace}/{documentType}/number/{number}/',
  '/document/v1/{namespace}/{documentType}/docid/{*}',
  '/document/v1/{namespace}/{documentType}/group/{group}/{*}',
  '/document/v1/{namespace}/{documentType}/number/{number}/{*}',
];

const handlerListing = JSON.stringify({
  handlers: [
    {
      id: 'com.yahoo.document.restapi.resource.DocumentV1ApiHandler',
      class: 'com.yahoo.document.restapi.resource.DocumentV1ApiHandler',
      bundle: 'vespaclient-container-plugin:8.0.0',
      serverBindings: ['http://*/document/v1/*'],
    },
  ],
});

const defaultBulkTimeChunkMs = 60_000;

/** Which of the garbage bodies comes next: each in turn. */
let garbageTurn = 0;

export function createRequestHandler(state: HandlerState): (req: AnyRequest, res: AnyResponse) => void {
  const scopeContext = (): ScopeContext => ({ store: state.store, globalTypes: state.globalTypes, documentTypes: state.documentTypes });

  function reply(req: AnyRequest, res: AnyResponse, status: number, body: string, headers?: Record<string, string>): void {
    sendJson(res, status, body, headers);
    if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status}`);
  }

  function replyError(req: AnyRequest, res: AnyResponse, pathId: string, err: unknown): void {
    if (isGone(res)) return;
    if (res.headersSent) {
      // A stream that fails after its headers went out cannot change its status: the client sees it cut.
      destroyConnection(res);
      return;
    }
    if (err instanceof HandlerError) reply(req, res, err.status, handlerErrorBody(pathId, err.message));
    else reply(req, res, 500, handlerErrorBody(pathId, err instanceof Error ? `${err.name}: ${err.message}` : String(err)));
  }

  /** Reads the whole body within the limit; a body over it is answered 413 here and the rest discarded. */
  function readBody(req: AnyRequest, res: AnyResponse, pathId: string, onBody: (body: Buffer) => void): void {
    const max = state.maxBodyBytes;
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > max) {
      tooLarge(req, res, pathId, declared);
      req.resume();
      return;
    }
    // Per-request state lives on the request; the listeners are shared functions (no closures per request).
    (req as BodyCarrier)[kBody] = { chunks: [], size: 0, failed: false, max, res, pathId, onBody, onTooLarge: tooLarge, onBadEncoding };
    holdConnection(req);
    req.on('data', onBodyData);
    req.on('end', onBodyEnd);
    req.on('error', onBodyError);
  }

  function tooLarge(req: AnyRequest, res: AnyResponse, pathId: string, size: number | string): void {
    reply(req, res, 413, handlerErrorBody(pathId, `Request body of ${size} bytes is larger than the limit of ${state.maxBodyBytes} bytes`));
  }

  function onBadEncoding(req: AnyRequest, res: AnyResponse, pathId: string, message: string): void {
    reply(req, res, 400, handlerErrorBody(pathId, message));
  }

  /**
   * Admission and service: the queue limit, the service rate and latency, then injected errors, then the work.
   * Streamed visits stay admitted until their last byte.
   */
  function admit(req: AnyRequest, res: AnyResponse, pathId: string, id: string | undefined, write: boolean, timeoutMs: number, work: Work): void {
    const { faults } = state;
    if (!faults.tryAdmit()) {
      reply(req, res, 429, handlerErrorBody(pathId, `Rejecting execution due to overload: ${faults.current.queueLimit} requests already enqueued`));
      return;
    }
    const delay = faults.delayMs();
    if (delay < 0) {
      faults.release();
      reply(req, res, 429, handlerErrorBody(pathId, `Rejecting execution due to overload: ${(maxQueueAgeMs / 1000).toFixed(1)} seconds worth of work enqueued`));
      return;
    }
    if (delay === 0) {
      serve(req, res, pathId, id, write, work);
      return;
    }
    if (delay >= timeoutMs) {
      setTimeout(() => {
        faults.release();
        if (!isGone(res)) reply(req, res, 504, handlerErrorBody(pathId, `Timeout after ${timeoutMs}ms`));
      }, timeoutMs);
      return;
    }
    setTimeout(() => {
      // A request abandoned while it queued is not dispatched, as in the service.
      if (isGone(res)) faults.release();
      else serve(req, res, pathId, id, write, work);
    }, delay);
  }

  function serve(req: AnyRequest, res: AnyResponse, pathId: string, id: string | undefined, write: boolean, work: Work): void {
    const { faults } = state;
    let pending: void | Promise<void> = undefined;
    try {
      const fault = faults.drawResponseFault();
      const injected = fault === undefined ? faults.drawError() : 0;
      if (fault === 'stall') {
        // Accepted and never answered; the admission is held until the client gives up on the connection.
        pending = isGone(res) ? undefined : new Promise<void>((resolve) => res.once('close', () => resolve()));
        if (state.log !== undefined) state.log(`${req.method} ${req.url} (stalled)`);
      } else if (fault === 'garbage') {
        const garbage = garbageBodies[garbageTurn++ % garbageBodies.length]!;
        res.writeHead(200, { 'content-type': garbage.contentType, 'content-length': Buffer.byteLength(garbage.body) });
        res.end(garbage.body);
        if (state.log !== undefined) state.log(`${req.method} ${req.url} 200 (not JSON)`);
      } else if (injected !== 0) {
        const message = injectedErrorMessage(injected);
        // 503 comes from the HTTP layer and 429 from the handler queue; the rest from storage, with the id.
        if (id === undefined || injected === 503) reply(req, res, injected, handlerErrorBody(pathId, message));
        else reply(req, res, injected, storageErrorBody(pathId, id, message));
      } else if (write && faults.current.feedBlock) {
        faults.note('feed-block');
        if (id === undefined) reply(req, res, 500, handlerErrorBody(pathId, feedBlockMessage));
        else reply(req, res, 507, storageErrorBody(pathId, id, feedBlockMessage));
      } else if (typeof work === 'function') {
        pending = work();
      } else if (work.kind !== 'get' && work.dryRun) {
        reply(req, res, 200, idBody(pathId, work.id));
      } else {
        const result = executeOperation(work);
        answer(req, res, result.status, result.body);
      }
    } catch (err) {
      replyError(req, res, pathId, err);
    }
    if (pending === undefined) faults.release();
    else
      pending.then(
        () => faults.release(),
        (err: unknown) => {
          faults.release();
          replyError(req, res, pathId, err);
        },
      );
  }

  function answer(req: AnyRequest, res: AnyResponse, status: number, body: string): void {
    if (isGone(res)) return;
    if (state.faults.drawTruncate()) {
      // The whole body, but a length that promises more: the client waits for bytes that never come, then the cut.
      res.writeHead(status, { 'content-type': jsonContentType, 'content-length': Buffer.byteLength(body) + 64 });
      writeChunk(res, body, () => destroyConnection(res));
      if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (cut short)`);
    } else if (state.faults.drawClose()) {
      sendThenCut(res, status, body);
      if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (connection cut)`);
    } else reply(req, res, status, body);
  }

  // ------------------------------------------------ single documents ------------------------------------------------

  function documentOperation(req: AnyRequest, res: AnyResponse, route: Extract<DocumentRoute, { kind: 'document' }>, pathId: string, query: QueryParameters, body: Buffer | undefined): void {
    checkDocumentType(state.documentTypes, route.type);
    // Without 'cluster', single-document operations go to the first (default-routed) cluster.
    const cluster = resolveCluster(state.store, query.string('cluster') ?? state.store.clusterNames[0]);
    const id = route.id;
    const traceLevel = parseTraceLevel(query);
    const timeoutMs = parseTimeoutMs(query);
    query.string('route');
    const dryRun = query.boolean('dryRun') ?? false;
    let op: PreparedOperation;
    switch (req.method) {
      case 'GET':
        if (query.has('dryRun')) throw badRequest(`May not specify 'dryRun' at '${pathId}' for a get`);
        op = { kind: 'get', pathId, id, cluster, traceLevel, timeoutMs, fieldSet: parseFieldSet(query.string('fieldSet')) };
        break;
      case 'POST': {
        const parsed = parseOperationBody(body!.toString('utf8'));
        const fields = requireFieldsObject(parsed, 'put');
        const condition = query.string('condition') ?? (parsed.condition as string | undefined);
        const create = query.boolean('create') ?? (parsed.create as boolean | undefined) ?? false;
        const matcher = condition === undefined ? undefined : compileCondition(condition);
        op = { kind: 'put', pathId, id, cluster, traceLevel, timeoutMs, fields, fieldsJson: parsed.fieldsJson, condition, matcher, create, dryRun };
        break;
      }
      case 'PUT': {
        const parsed = parseOperationBody(body!.toString('utf8'));
        const fields = parsed.fields ?? {};
        applyUpdate({}, fields); // Validates the operations (unknown ones are a 400) before admission.
        const condition = query.string('condition') ?? (parsed.condition as string | undefined);
        const create = query.boolean('create') ?? (parsed.create as boolean | undefined) ?? false;
        op = { kind: 'update', pathId, id, cluster, traceLevel, timeoutMs, fields, condition, matcher: compileCondition(condition), create, dryRun };
        break;
      }
      default: {
        const condition = query.string('condition');
        op = { kind: 'remove', pathId, id, cluster, traceLevel, timeoutMs, condition, matcher: compileCondition(condition), dryRun };
      }
    }
    admit(req, res, pathId, id, op.kind !== 'get', timeoutMs, op);
  }

  // --------------------------------------------------- collections --------------------------------------------------

  function collectionOperation(req: AnyRequest, res: AnyResponse, route: Extract<DocumentRoute, { kind: 'root' | 'collection' }>, pathId: string, query: QueryParameters, body: Buffer | undefined): void {
    const wantedCluster = query.string('cluster');
    if (req.method === 'GET') {
      if (route.kind === 'root' && wantedCluster === undefined)
        throw badRequest("Must set 'cluster' parameter to a valid content cluster id when visiting at a root /document/v1/ level");
      const params = parseVisitParameters(query, pathId, req.headers.accept);
      const scope = buildScope(scopeContext(), route, query, pathId, resolveCluster(state.store, wantedCluster));
      const settings = { chunkDocuments: state.visitChunkDocuments, cutStreamAfterDocuments: state.faults.current.cutStreamAfterDocuments };
      admit(req, res, pathId, undefined, false, scope.timeoutMs, () => {
        if (!params.stream) {
          visitPlain(res, scope, params, settings);
          if (state.log !== undefined) state.log(`${req.method} ${req.url} 200`);
          return;
        }
        return visitStreamed(res, scope, params, settings).then((status) => {
          if (state.log !== undefined) state.log(`${req.method} ${req.url} ${status} (streamed)`);
        });
      });
      return;
    }

    const what = req.method === 'PUT' ? 'a bulk update' : req.method === 'DELETE' ? 'a bulk delete' : 'a copy';
    checkBulkParameters(query, pathId, what);
    const cluster = resolveCluster(state.store, wantedCluster);
    let operation: BulkOperation;
    if (req.method === 'PUT') {
      if (route.kind !== 'collection') throw badRequest('Document type must be specified for mass updates');
      const parsed = parseOperationBody(body!.toString('utf8'));
      const fields = parsed.fields ?? {};
      applyUpdate({}, fields);
      operation = { kind: 'update', fields };
    } else if (req.method === 'DELETE') {
      operation = { kind: 'delete' };
    } else {
      const destination = resolveCluster(state.store, query.require('destinationCluster', pathId));
      operation = { kind: 'copy', destination };
    }
    const timeChunkMs = query.durationMs('timeChunk') ?? defaultBulkTimeChunkMs;
    const scope = buildScope(scopeContext(), route, query, pathId, cluster);
    admit(req, res, pathId, undefined, true, scope.timeoutMs, () => answer(req, res, 200, runBulkChunk(scope, operation, state.visitChunkDocuments, timeChunkMs)));
  }

  function documentApi(req: AnyRequest, res: AnyResponse, pathId: string, queryString: string): void {
    const route = parseDocumentPath(pathId);
    if (route.kind === 'none') {
      notFound(req, res, pathId);
      return;
    }
    const method = req.method ?? 'GET';
    const allowed = route.kind === 'root' ? rootMethods : collectionMethods;
    if (!allowed.includes(method)) {
      if (method === 'OPTIONS') {
        res.writeHead(204, { allow: allowed.join(',') });
        res.end();
      } else {
        reply(req, res, 405, handlerErrorBody(pathId, `'${method}' not allowed at '${pathId}'. Allowed methods are: ${allowed.join(', ')}`), {
          allow: allowed.join(','),
        });
      }
      return;
    }
    const query = new QueryParameters(queryString);
    const withBody = method === 'POST' || method === 'PUT';
    const dispatch = (body: Buffer | undefined): void => {
      try {
        if (route.kind === 'document') documentOperation(req, res, route, pathId, query, body);
        else collectionOperation(req, res, route, pathId, query, body);
      } catch (err) {
        replyError(req, res, pathId, err);
      }
    };
    // Copy (POST on a collection) has no body; everything else that writes reads one.
    if (withBody && !(method === 'POST' && route.kind !== 'document')) readBody(req, res, pathId, dispatch);
    else {
      if (!req.readableEnded) req.resume();
      dispatch(undefined);
    }
  }

  function notFound(req: AnyRequest, res: AnyResponse, pathId: string): void {
    reply(req, res, 404, handlerErrorBody(pathId, `Nothing at '${pathId}'. Available paths are:\n${handlerPaths.join('\n')}`));
  }

  // ------------------------------------------------------ admin -----------------------------------------------------

  function admin(req: AnyRequest, res: AnyResponse, pathId: string): void {
    if (pathId === '/_sim/faults') {
      if (req.method === 'GET') {
        reply(req, res, 200, JSON.stringify(state.faults.get()));
        return;
      }
      if (req.method === 'PUT' || req.method === 'POST') {
        readBody(req, res, pathId, (body) => {
          let patch: unknown;
          try {
            patch = JSON.parse(body.toString('utf8'));
          } catch (err) {
            reply(req, res, 400, handlerErrorBody(pathId, `Failed parsing JSON: ${(err as Error).message}`));
            return;
          }
          const problem = validateFaultPatch(patch);
          if (problem !== undefined) reply(req, res, 400, handlerErrorBody(pathId, problem));
          else reply(req, res, 200, JSON.stringify(state.faults.set(patch as object)));
        });
        return;
      }
      reply(req, res, 405, handlerErrorBody(pathId, `'${req.method}' not allowed at '${pathId}'. Allowed methods are: GET, PUT`), { allow: 'GET,PUT' });
      return;
    }
    if (pathId === '/_sim/documents') {
      if (req.method === 'DELETE') {
        const removed = state.store.size();
        state.store.clear();
        reply(req, res, 200, JSON.stringify({ removed }));
        return;
      }
      if (req.method === 'GET') {
        const counts: Record<string, number> = {};
        for (const name of state.store.clusterNames) counts[name] = state.store.size(name);
        reply(req, res, 200, JSON.stringify({ documents: state.store.size(), clusters: counts }));
        return;
      }
      reply(req, res, 405, handlerErrorBody(pathId, `'${req.method}' not allowed at '${pathId}'. Allowed methods are: GET, DELETE`), { allow: 'GET,DELETE' });
      return;
    }
    notFound(req, res, pathId);
  }

  function start(req: AnyRequest, res: AnyResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathId = q < 0 ? url : url.slice(0, q);
    try {
      if (pathId.startsWith('/document/v1')) documentApi(req, res, pathId, q < 0 ? '' : url.slice(q + 1));
      else if (pathId.startsWith('/_sim/')) admin(req, res, pathId);
      else if (pathId === '/' && (req.method === 'GET' || req.method === 'HEAD')) reply(req, res, 200, handlerListing);
      else if (pathId === '/state/v1/health' || pathId === '/status.html' || pathId === '/ApplicationStatus') reply(req, res, 200, '{"status":{"code":"up"}}');
      else notFound(req, res, pathId);
    } catch (err) {
      replyError(req, res, pathId, err);
    }
  }

  return function handle(req: AnyRequest, res: AnyResponse): void {
    enterConnection(start, req, res);
  };
}
