import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { prefersJsonl } from './accept.js';
import { parseFieldSet, projectFields, type FieldSet } from './field-set.js';
import {
  destroyConnection,
  isGone,
  sendJson,
  waitForDrain,
  writeChunk,
  type AnyResponse,
} from '../http/http-response.js';
import type { QueryParameters } from './query-parameters.js';
import { badRequest, jsonContentType, jsonlContentType, traceJson } from './responses.js';
import { encodeContinuation, fieldsJsonOf, fieldsOf, type StoredEntry } from './document-store.js';
import { percentFinished, type VisitScope } from './visit-plan.js';
import type { VisitCost } from './visit-cost.js';
import type { FieldsRenderer } from './tensor-rendering.js';

/**
 * Visiting: GET on a collection path or the root. Plain requests answer one JSON object holding a chunk of
 * documents and a continuation; `stream=true` writes documents as they are read, as JSONL when the client
 * prefers it, with backpressure so a slow reader never makes the server buffer the corpus.
 */
export interface VisitSettings {
  /** Documents per plain response (when wantedDocumentCount is not given) and between progress lines in a stream. */
  chunkDocuments: number;
  /** 0 = off; destroy a streamed response after this many documents. */
  cutStreamAfterDocuments: number;
  /** The content nodes' iteration time, charged per entry iterated (those of the request's space and slice). */
  cost: VisitCost;
}

/** Documents charged to the visit cost at a time: a few ms at realistic costs, so timers stay coarse. */
const costBatch = 256;

const maxPlainDocuments = 1024;
export const maxScannedPerRequest = 100_000;
const flushChars = 64 * 1024;
/** Entries a stream iterates between turns of the event loop, so that one long visit does not hold the others up. */
const yieldEntries = 8192;

interface VisitParameters {
  stream: boolean;
  jsonl: boolean;
  wanted: number | undefined;
  fieldSet: FieldSet;
  /** Tensor fields per `format.tensors`; undefined: as stored. */
  render: FieldsRenderer | undefined;
}

export function parseVisitParameters(
  query: QueryParameters,
  accept: string | undefined,
  render?: FieldsRenderer,
): VisitParameters {
  const wanted = query.integer('wantedDocumentCount');
  if (wanted !== undefined && wanted <= 0) throw badRequest('wantedDocumentCount must be positive');
  const concurrency = query.integer('concurrency');
  if (concurrency !== undefined && concurrency <= 0) throw badRequest('concurrency must be positive');
  const fieldSet = parseFieldSet(query.string('fieldSet'));
  const stream = query.boolean('stream') ?? false;
  const jsonl = stream && prefersJsonl(accept);
  return { stream, jsonl, wanted, fieldSet, render };
}

function documentJson(entry: StoredEntry, params: VisitParameters, key: 'id' | 'put'): string {
  if (entry.removed) return `{"remove":${entry.idJson}}`;
  const { fieldSet, render } = params;
  const projected =
    fieldSet.kind === 'all' ? fieldsJsonOf(entry) : JSON.stringify(projectFields(fieldsOf(entry), fieldSet));
  const fields = render === undefined ? projected : render(entry.type, projected);
  return `{"${key}":${entry.idJson},"fields":${fields}}`;
}

function tokenAt(scope: VisitScope, index: number): string {
  const e = scope.ordered[index];
  return encodeContinuation({ bucket: e.bucket, id: e.id });
}

/** A plain visit: one chunk, answered once the content nodes' time for it has passed. Returns the status sent. */
export async function visitPlain(
  res: AnyResponse,
  scope: VisitScope,
  params: VisitParameters,
  settings: VisitSettings,
): Promise<number> {
  const limit = Math.min(maxPlainDocuments, params.wanted ?? settings.chunkDocuments);
  const deadline = performance.now() + scope.timeoutMs;
  const { ordered, accepts } = scope;
  const docs: string[] = [];
  let i = scope.start;
  // One request scans a bounded stretch, so a selective visit over a large corpus answers in pages rather
  // than blocking the server; the continuation carries on from there.
  const end = Math.min(ordered.length, scope.start + maxScannedPerRequest);
  for (; i < end && docs.length < limit; i++) {
    const e = ordered[i];
    if (accepts(e)) docs.push(documentJson(e, params, 'id'));
    if ((i & 1023) === 0 && performance.now() > deadline) {
      i++;
      break;
    }
  }
  await settings.cost.charge(i - scope.start);
  if (isGone(res)) return 200;
  let body = `{"pathId":${JSON.stringify(scope.pathId)},"documents":[${docs.join(',')}],"documentCount":${docs.length}`;
  const trace = traceJson(scope.traceLevel, [`visited ${i - scope.start} entries in cluster '${scope.cluster.name}'`]);
  if (trace !== undefined) body += `,"trace":${trace}`;
  if (i < ordered.length)
    body += `,"continuation":${JSON.stringify(tokenAt(scope, i - 1 < scope.start ? scope.start : i - 1))}`;
  body += '}';
  sendJson(res, 200, body);
  return 200;
}

/**
 * A streamed visit: runs until done, the timeout, or wantedDocumentCount. Continuation lines (JSONL) are
 * written every `chunkDocuments` documents; a client cut off mid-stream resumes from the last one.
 */
export async function visitStreamed(
  res: AnyResponse,
  scope: VisitScope,
  params: VisitParameters,
  settings: VisitSettings,
): Promise<number> {
  const { ordered, accepts } = scope;
  const { jsonl } = params;
  const deadline = performance.now() + scope.timeoutMs;
  const wanted = params.wanted ?? Infinity;
  const cutAfter = settings.cutStreamAfterDocuments > 0 ? settings.cutStreamAfterDocuments : Infinity;
  const chunk = Math.max(1, settings.chunkDocuments);

  res.writeHead(200, { 'content-type': jsonl ? jsonlContentType : jsonContentType });
  let buffer = jsonl ? '' : `{"pathId":${JSON.stringify(scope.pathId)},"documents":[`;
  let count = 0;
  let sinceProgress = 0;
  let iteratedSinceYield = 0;
  let i = scope.start;
  const costing = settings.cost.enabled;
  /** Entries before this index are charged to the content nodes' time. */
  let charged = scope.start;

  const flush = async (): Promise<boolean> => {
    if (buffer.length === 0) return !isGone(res);
    const ok = writeChunk(res, buffer);
    buffer = '';
    if (!ok) await waitForDrain(res);
    return !isGone(res);
  };

  for (; i < ordered.length && count < wanted; i++) {
    const e = ordered[i];
    if (costing && i + 1 - charged >= costBatch) {
      // The content node iterates before it sends: what it sends waits for its time. What it iterated before is paid
      // for and goes out now, as a visitor sends each bucket's documents when done with it, not after the next one.
      if (!(await flush())) return 200;
      await settings.cost.charge(i + 1 - charged);
      charged = i + 1;
      if (isGone(res)) return 200;
    }
    if (accepts(e)) {
      if (jsonl) buffer += `${documentJson(e, params, 'put')}\n`;
      else buffer += count === 0 ? documentJson(e, params, 'id') : `,${documentJson(e, params, 'id')}`;
      count++;
      if (count >= cutAfter) {
        // Fault: the stream dies after this many documents, before any trailer.
        writeChunk(res, buffer, () => destroyConnection(res));
        return 200;
      }
      if (jsonl && ++sinceProgress >= chunk) {
        sinceProgress = 0;
        buffer += `{"continuation":{"token":${JSON.stringify(tokenAt(scope, i))},"percentFinished":${percentFinished(scope, i + 1)}}}\n`;
      }
    }
    // Every so many entries iterated, matched or not, the node sends what it has and lets other requests run.
    const yielding = ++iteratedSinceYield >= yieldEntries;
    if (yielding || buffer.length >= flushChars) {
      if (!(await flush())) return 200;
      if (yielding) {
        iteratedSinceYield = 0;
        await yieldToLoop();
      }
      if (performance.now() > deadline) {
        i++;
        break;
      }
    }
  }

  await settings.cost.charge(i - charged);
  const finished = i >= ordered.length;
  const token = finished ? undefined : tokenAt(scope, Math.max(scope.start, i - 1));
  const trace = traceJson(scope.traceLevel, [`visited ${i - scope.start} entries in cluster '${scope.cluster.name}'`]);
  if (jsonl) {
    buffer += `{"sessionStats":{"documentCount":${count}}}\n`;
    if (trace !== undefined) buffer += `{"sessionTrace":{"trace":${trace}}}\n`;
    buffer +=
      token === undefined
        ? '{"continuation":{"percentFinished":100.0}}\n'
        : `{"continuation":{"token":${JSON.stringify(token)},"percentFinished":${percentFinished(scope, i)}}}\n`;
  } else {
    buffer += `],"documentCount":${count}`;
    if (trace !== undefined) buffer += `,"trace":${trace}`;
    if (token !== undefined) buffer += `,"continuation":${JSON.stringify(token)}`;
    buffer += '}';
  }
  if (!isGone(res)) res.end(buffer);
  return 200;
}
