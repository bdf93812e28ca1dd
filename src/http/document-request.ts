import { gzipSync, constants as zlibConstants } from 'node:zlib';
import { tensorFormatParameter, type TensorFormat } from '../document/tensor-format.js';
import { VespaBulkError } from '../core/errors.js';
import type { OperationKind } from '../document/operation.js';
import type { BodyFrame } from './transport.js';

/**
 * How one document operation becomes an HTTP request: method, path and query, headers and body. Pure; the
 * feeder and the document client both build their requests here, so both send the same method, path, body
 * and headers for the same operation. (Only the order of query parameters differs: a feed's fixed ones come
 * ahead of each operation's own.)
 */
export interface DocumentParams {
  cluster?: string;
  fieldSet?: string;
  /** Test-and-set condition (a document selection). */
  condition?: string;
  create?: boolean;
  route?: string;
  /** Server-side timeout with unit, e.g. `5s` or `1000ms`. */
  serviceTimeout?: string;
  tracelevel?: number;
  dryRun?: boolean;
  /** get: how tensor fields are written (`format.tensors`); see `VisitSelectionOptions.tensorFormat`. */
  tensorFormat?: TensorFormat;
}

/** The method of each operation, and of a get. */
export const methodOf = { put: 'POST', update: 'PUT', remove: 'DELETE', get: 'GET' } as const satisfies Record<
  OperationKind | 'get',
  string
>;

/** `query` with `k=v` added; `v` must already be encoded. */
function addParam(query: string, k: string, v: string): string {
  return `${query}${query === '' ? '?' : '&'}${k}=${v}`;
}

/** `?a=b&...` (or '') from the parameters that are set, each value URL-encoded. */
export function documentQuery(params: DocumentParams | undefined): string {
  if (!params) return '';
  let q = '';
  if (params.cluster !== undefined) q = addParam(q, 'cluster', encodeURIComponent(params.cluster));
  if (params.fieldSet !== undefined) q = addParam(q, 'fieldSet', encodeURIComponent(params.fieldSet));
  if (params.condition !== undefined) q = addParam(q, 'condition', encodeURIComponent(params.condition));
  if (params.create !== undefined) q = addParam(q, 'create', String(params.create));
  if (params.route !== undefined) q = addParam(q, 'route', encodeURIComponent(params.route));
  if (params.serviceTimeout !== undefined) q = addParam(q, 'timeout', encodeURIComponent(params.serviceTimeout));
  if (params.tracelevel !== undefined && params.tracelevel > 0)
    q = addParam(q, 'tracelevel', String(params.tracelevel));
  if (params.dryRun) q = addParam(q, 'dryRun', 'true');
  if (params.tensorFormat !== undefined)
    q = addParam(q, tensorFormatParameter, encodeURIComponent(params.tensorFormat));
  return q;
}

/** Milliseconds as the service's timeout parameter. */
export function formatTimeout(ms: number): string {
  return `${Math.max(1, Math.round(ms))}ms`;
}

/** What is the same for every request of one feed or one client. */
export interface DocumentEncoding {
  /** Path prefix of the endpoint ('' or `/base`), before `/document/v1/`. */
  prefix: string;
  /** Extra headers on every request (authentication tokens). content-type and content-encoding are ours. */
  headers?: Record<string, string>;
  /** Gzip bodies larger than `compressAboveBytes`. */
  compress?: boolean;
  /** Parameters sent with every operation (a feed's flags), ahead of the operation's own. */
  route?: string;
  tracelevel?: number;
  dryRun?: boolean;
}

/** Where `encodeBody` puts an operation's body and the headers that go with it: the feeder keeps them per operation. */
export interface EncodedBody {
  body?: Buffer | null;
  /** What goes around `body` on the wire (`encodeFramed`'s), or undefined where `body` is the whole. */
  bodyFrame?: BodyFrame;
  headers?: string[];
}

/** Smaller bodies cost more to gzip than they save on the wire. */
export const compressAboveBytes = 512;

const fieldsOpen = '{"fields":';
/** `{"fields":` and `}`: what `encodeFramed` sends around the fields. */
const fieldsFrame: BodyFrame = [Buffer.from(fieldsOpen, 'latin1'), Buffer.from('}', 'latin1')];

/**
 * The container's limit on one document operation's request body: `maxDocumentOperationRequestSizeMib`,
 * 100 MiB by default (document-operation-executor.def), counted in bytes as read, after gzip is inflated.
 */
export const defaultMaxRequestBytes = 100 * 1024 * 1024;

/** Bytes of the body `{"fields":<fields>}` before compression: what the handler counts against its limit. */
export function requestBodyBytes(fields: Buffer | undefined): number {
  return fields === undefined ? 0 : fields.length + fieldsOpen.length + 1;
}

/**
 * VB_REQUEST_TOO_LARGE when the operation's body is over `maxBytes` (the handler would answer 413 after the
 * whole body crossed the wire), else undefined. The message is the handler's 413 message, with what was done.
 */
export function requestSizeError(
  fields: Buffer | undefined,
  maxBytes: number,
  documentId?: string,
): VespaBulkError | undefined {
  const size = requestBodyBytes(fields);
  if (size <= maxBytes) return undefined;
  return new VespaBulkError(
    'VB_REQUEST_TOO_LARGE',
    `Document operation request size ${size} bytes exceeds maximum size of ${maxBytes} bytes (maxRequestBytes; the container's maxDocumentOperationRequestSizeMib): not sent`,
    documentId === undefined ? {} : { place: { documentId } },
  );
}

/**
 * zlib's output chunk. With its default of 16 KiB, the bench's 1 KB body gzips to 71 bytes that keep a
 * 16 KiB buffer alive until the body's Buffer is collected, for every operation in flight or not yet
 * collected. Under `Buffer.poolSize / 2` a chunk comes from the shared pool, and a longer output is joined
 * from several. Measured in one process, 1 KB and 10 KB bodies gzip no slower with it.
 */
const gzipChunkBytes = 1024;

/**
 * Builds document requests for one endpoint. Everything that does not change per operation (the session's
 * query, the header lists) is built once, so the per-operation work is a few string joins and one body buffer.
 */
export class DocumentRequestEncoder {
  private readonly prefix: string;
  private readonly compress: boolean;
  private readonly sessionQuery: string;
  private readonly headersJson: string[];
  private readonly headersGzip: string[];
  private readonly headersNone: string[];

  constructor(encoding: DocumentEncoding) {
    this.prefix = encoding.prefix;
    this.compress = encoding.compress ?? false;
    this.sessionQuery = documentQuery({
      route: encoding.route,
      tracelevel: encoding.tracelevel,
      dryRun: encoding.dryRun,
    });
    const user: string[] = [];
    const userAboutBody: string[] = [];
    for (const [k, v] of Object.entries(encoding.headers ?? {})) {
      user.push(k, v);
      // The body is ours, so is its description: a second content-type would make the request ambiguous.
      const name = k.toLowerCase();
      if (name !== 'content-type' && name !== 'content-encoding') userAboutBody.push(k, v);
    }
    this.headersJson = ['content-type', 'application/json', ...userAboutBody];
    this.headersGzip = ['content-type', 'application/json', 'content-encoding', 'gzip', ...userAboutBody];
    this.headersNone = user;
  }

  /** Path and query of one attempt at a feed operation; `timeoutMs` is what is left of its deadline, when sent. */
  operationPath(
    docPath: string,
    condition: string | undefined,
    create: boolean | undefined,
    timeoutMs: number | undefined,
  ): string {
    let q = this.sessionQuery;
    if (condition !== undefined) q = addParam(q, 'condition', encodeURIComponent(condition));
    if (create !== undefined) q = addParam(q, 'create', create ? 'true' : 'false');
    if (timeoutMs !== undefined) q = addParam(q, 'timeout', formatTimeout(timeoutMs));
    return this.prefix + docPath + q;
  }

  /** Path and query of a single request whose parameters are all given with it. */
  requestPath(docPath: string, params: DocumentParams | undefined): string {
    return this.prefix + docPath + documentQuery(params);
  }

  /**
   * Sets `into.body` to `{"fields":<fields>}` (the raw bytes, never re-serialised; gzipped when that pays) or
   * null without fields, and `into.headers` to the headers that describe it.
   */
  encodeBody(fields: Buffer | undefined, into: EncodedBody): void {
    if (fields === undefined) {
      into.body = null;
      into.headers = this.headersNone;
      return;
    }
    const len = fields.length + fieldsOpen.length + 1;
    const body = Buffer.allocUnsafe(len);
    body.write(fieldsOpen, 0, 'latin1');
    fields.copy(body, fieldsOpen.length);
    body[len - 1] = 0x7d;
    if (this.compress && len > compressAboveBytes) {
      into.body = gzipSync(body, { level: zlibConstants.Z_BEST_SPEED, chunkSize: gzipChunkBytes });
      into.headers = this.headersGzip;
    } else {
      into.body = body;
      into.headers = this.headersJson;
    }
  }

  /**
   * As `encodeBody`, but an uncompressed body is left as the fields where they lie (`into.body`) with
   * `{"fields":` and `}` as its `bodyFrame`: the transport writes the three into its connection's buffer, and no
   * body is put together per operation. A gzipped body is whole, as from `encodeBody`.
   */
  encodeFramed(fields: Buffer | undefined, into: EncodedBody): void {
    if (fields === undefined || (this.compress && fields.length + fieldsOpen.length + 1 > compressAboveBytes)) {
      into.bodyFrame = undefined;
      this.encodeBody(fields, into);
      return;
    }
    into.body = fields;
    into.bodyFrame = fieldsFrame;
    into.headers = this.headersJson;
  }
}
