import http2, { type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { expectSpoke } from '../support/protocols.js';
import {
  expectedStore,
  failureLines,
  failureReasons,
  quickRetries,
  storeMap,
  tempDir,
  writeJsonl,
  type Op,
} from './harness.js';

/**
 * HTTP/2 resets and GOAWAY end to end through `feed()`: a node:http2 server in front of a simulator passes each
 * stream on to it (over HTTP/1.1), or not, as the test's script says, and resets streams or sends GOAWAY where it
 * says. What the server did not process (REFUSED_STREAM, above a GOAWAY's last stream id) is sent again and
 * applied once; what it may have applied (another reset, a connection closed under a stream it took) is sent
 * again only when safe to repeat; every operation ends as exactly one of succeeded or in the failure output,
 * with its reason. (`test/http/h2/pool.test.ts` covers the pool's side of each, one request at a time.)
 *
 * HTTP/2 only: a refused stream and a GOAWAY's last stream id have no HTTP/1.1 counterpart. What HTTP/1.1 has, a
 * connection closed before or after the service applied the request, is in feed-faults.test.ts (`closeRate`, both
 * protocols), and answers broken after their headers on both protocols are in cut-feed.test.ts.
 */

/** What the front does with a stream: answer it with the simulator's answer, refuse it unprocessed (REFUSED_STREAM), reset it (INTERNAL_ERROR) before or after the simulator applied it, or leave it to the script. */
type Action = 'answer' | 'refuse' | 'reset-before' | 'reset-after' | 'script';

/** An operation as the front sees it: method and document path (the corpora here have one operation of a kind per id). */
type Key = string;

interface Front {
  url: string;
  /** How many times each operation arrived. */
  seen: Map<Key, number>;
  /** How many times each was passed on to the simulator. */
  forwarded: Map<Key, number>;
  /** Passes a stream to the simulator; answers with what it said unless `answer` is false (applied, answer lost). */
  forward(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer, answer: boolean): Promise<void>;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const keyOf = (headers: IncomingHttpHeaders): Key => `${headers[':method']} ${headers[':path']!.split('?')[0]}`;
const keyOfOp = (op: Op): Key => {
  const id = (op.put ?? op.update ?? op.remove) as string;
  return `${op.put !== undefined ? 'POST' : op.update !== undefined ? 'PUT' : 'DELETE'} /document/v1/ns/music/docid/${id.split('::')[1]}`;
};

function readBody(stream: ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** A stream as the front's script sees it, as it arrives (in stream id order), its body still coming. */
interface Arrival {
  key: Key;
  /** The how-many-th time this operation arrived (1: the first). */
  arrival: number;
  stream: ServerHttp2Stream;
  headers: IncomingHttpHeaders;
  body: Promise<Buffer>;
}

/**
 * A cleartext HTTP/2 server on 127.0.0.1 (port 0) in front of `backend`; `script` picks each stream's action as
 * it arrives. With 'script' the stream is the script's to end.
 */
async function startFront(backend: DocumentServer, script: (a: Arrival) => Action): Promise<Front> {
  const pool = new Pool(backend.url, { connections: 16 });
  const seen = new Map<Key, number>();
  const forwarded = new Map<Key, number>();
  const sessions = new Set<ServerHttp2Session>();
  const server = http2.createServer();
  const forward = async (
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    body: Buffer,
    answer: boolean,
  ): Promise<void> => {
    const key = keyOf(headers);
    forwarded.set(key, (forwarded.get(key) ?? 0) + 1);
    const encoding = headers['content-encoding'];
    const res = await pool.request({
      method: headers[':method'] as 'POST',
      path: headers[':path']!,
      headers: { 'content-type': 'application/json', ...(encoding !== undefined && { 'content-encoding': encoding }) },
      body: body.length > 0 ? body : undefined,
    });
    const text = await res.body.text();
    if (!answer || stream.destroyed) return;
    stream.respond({ ':status': res.statusCode, 'content-type': 'application/json' });
    stream.end(text);
  };
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    // A stream the test resets, or whose session it destroys, ends in an error on this side too.
    stream.on('error', () => undefined);
    const key = keyOf(headers);
    const arrival = (seen.get(key) ?? 0) + 1;
    seen.set(key, arrival);
    const body = readBody(stream);
    const action = script({ key, arrival, stream, headers, body });
    void body.then(async (body) => {
      if (action === 'refuse') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      else if (action === 'reset-before') stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      else if (action === 'reset-after') {
        await forward(stream, headers, body, false);
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      } else if (action === 'answer') await forward(stream, headers, body, true);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(async () => {
    for (const s of sessions) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await pool.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, forwarded, forward };
}

/** A simulator holding `seeded` documents. */
async function backendWith(seeded: Array<{ id: string; fields: Record<string, unknown> }>): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0 });
  cleanups.push(() => server.close());
  server.store.seed(seeded);
  return server;
}

async function feedThrough(front: Front, ops: Op[], extra: Parameters<typeof feed>[1] = {}) {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  const failures = join(dir, 'failures.jsonl');
  const results = new Map<Key, OperationResult>();
  const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
    endpoint: front.url,
    protocol: 'h2',
    failures,
    retryPolicy: quickRetries,
    onResult: (r) => {
      const key = keyOfOp(ops[r.line - 1]);
      // Each operation ends once.
      expect(results.has(key), key).toBe(false);
      results.set(key, r);
    },
    ...extra,
  });
  expectSpoke(summary, 'h2');
  // Exactly one of succeeded or in the failure output, with a reason line for each.
  const failed = failureLines(failures);
  expect(results.size).toBe(ops.length);
  expect(summary.ok + failed.length).toBe(ops.length);
  expect(new Set(failed)).toEqual(
    new Set(ops.filter((o) => !results.get(keyOfOp(o))!.ok).map((o) => JSON.stringify(o))),
  );
  const reasons = new Map(failureReasons(failures).map((r) => [`${r.operation as string} ${r.id as string}`, r]));
  expect(reasons.size).toBe(failed.length);
  return { summary, results, reasons };
}

describe('feed over h2 against a server that resets streams (RST_STREAM)', () => {
  it('refused streams go again and apply once; reset ones are retried only when safe to repeat; each operation ends once', async () => {
    // The first arrival's fate, by the document's number and the kind of operation, so every kind meets every
    // fate; later arrivals are answered.
    const fates: Action[] = ['refuse', 'reset-before', 'reset-after', 'answer'];
    const kinds = ['POST', 'PUT', 'DELETE'];
    const fateOf = (key: Key): Action =>
      fates[(Number(/(\d+)$/.exec(key)![1]) + kinds.indexOf(key.split(' ')[0])) % fates.length];
    const ops: Op[] = [];
    const seeded: Array<{ id: string; fields: Record<string, unknown> }> = [];
    for (let k = 0; k < 40; k++) {
      // Safe to repeat: put, assign-only update, remove.
      ops.push({ put: `id:ns:music::p${k}`, fields: { title: `t${k}`, n: k } });
      ops.push({ update: `id:ns:music::u${k}`, create: true, fields: { title: { assign: `u${k}` } } });
      ops.push({ remove: `id:ns:music::r${k}` });
      // Not safe to repeat: an increment, and a test-and-set whose condition its own update makes false.
      ops.push({ update: `id:ns:music::c${k}`, fields: { n: { increment: 1 } } });
      ops.push({ update: `id:ns:music::t${k}`, condition: 'music.n == 0', fields: { n: { assign: 1 } } });
      seeded.push(
        { id: `id:ns:music::r${k}`, fields: { n: 0 } },
        { id: `id:ns:music::c${k}`, fields: { n: 0 } },
        { id: `id:ns:music::t${k}`, fields: { n: 0 } },
      );
    }
    const backend = await backendWith(seeded);
    const front = await startFront(backend, ({ key, arrival }) => (arrival === 1 ? fateOf(key) : 'answer'));
    const { summary, results, reasons } = await feedThrough(front, ops);

    const unsafe = (op: Op): boolean =>
      op.condition !== undefined || JSON.stringify(op.fields ?? {}).includes('increment');
    for (const op of ops) {
      const key = keyOfOp(op);
      const fate = fateOf(key);
      const r = results.get(key)!;
      const why = `${key}: first arrival ${fate}`;
      if (fate === 'answer' || fate === 'refuse') {
        // Refused unprocessed: the pool sent it again at once; the feed saw one attempt, the simulator one request.
        expect(r.ok, why).toBe(true);
        expect(r.attempts, why).toBe(1);
        expect(front.seen.get(key), why).toBe(fate === 'refuse' ? 2 : 1);
        expect(front.forwarded.get(key), why).toBe(1);
      } else if (!unsafe(op)) {
        expect(r.ok, why).toBe(true);
        expect(r.attempts, why).toBe(2);
        expect(front.seen.get(key), why).toBe(2);
      } else {
        // Maybe applied and not safe to repeat: sent once, failed with the transport reason (not a 412 of its own making).
        expect(r.ok, why).toBe(false);
        expect(front.seen.get(key), why).toBe(1);
        const reason = reasons.get(`update ${op.update as string}`);
        expect(reason, why).toMatchObject({
          code: 'VB_TRANSPORT',
          attempts: 1,
          message: expect.stringMatching(
            /^HTTP\/2 stream reset by the server: INTERNAL_ERROR; not sent again: it may have been applied/,
          ),
        });
        expect(reason, why).not.toHaveProperty('status');
      }
    }
    // Whatever went wrong, the simulator applied each operation at most once: the counters and test-and-sets show
    // 1 where the work was done (the reset ones after it too) and 0 where it never reached the simulator.
    for (let k = 0; k < 40; k++) {
      for (const prefix of ['c', 't']) {
        const key = keyOfOp({ update: `id:ns:music::${prefix}${k}` });
        expect(backend.store.get(`id:ns:music::${prefix}${k}`)!.fields.n, key).toBe(
          fateOf(key) === 'reset-before' ? 0 : 1,
        );
      }
    }
    // The safe ones all applied, in order: the store is what they make.
    const safe = ops.filter((o) => !unsafe(o));
    const expected = expectedStore([
      ...seeded.filter((d) => d.id.includes('::r')).map((d) => ({ put: d.id, fields: d.fields })),
      ...safe,
    ]);
    const actual = storeMap(backend);
    for (const id of actual.keys()) if (/::[ct]\d/.test(id)) actual.delete(id);
    expect(actual).toEqual(expected);
    expect(summary.errors).toBe(ops.filter((o) => unsafe(o) && fateOf(keyOfOp(o)).startsWith('reset')).length);
  });
});

describe('feed over h2 against a server that sends GOAWAY below open streams and closes', () => {
  it('streams above the last stream id go again and apply once; those below it, left unanswered, are retried only when safe', async () => {
    // Puts and increments taking turns, so both kinds meet each fate; then puts enough to go on after it.
    const ops: Op[] = [];
    const seeded: Array<{ id: string; fields: Record<string, unknown> }> = [];
    for (let k = 0; k < 30; k++) {
      ops.push({ put: `id:ns:music::g${k}`, fields: { n: k } });
      ops.push({ update: `id:ns:music::c${k}`, fields: { n: { increment: 1 } } });
      seeded.push({ id: `id:ns:music::c${k}`, fields: { n: 0 } });
    }
    for (let k = 30; k < 300; k++) ops.push({ put: `id:ns:music::g${k}`, fields: { n: k } });
    const backend = await backendWith(seeded);

    // The first connection: once 12 streams are open on it, the server takes the first six (applies them all,
    // answers three), sends GOAWAY naming the sixth as the last it processed, and closes the connection once
    // the client has read the GOAWAY (a PING sent after it comes back). It never processes the others.
    type Fate = 'answered' | 'applied, unanswered' | 'above the last stream id';
    const fates = new Map<Key, Fate>();
    let first: ServerHttp2Session | undefined;
    const held: Arrival[] = [];
    let front: Front;
    const goAway = async (session: ServerHttp2Session): Promise<void> => {
      const processed = held.slice(0, 6);
      for (const a of held.slice(6)) fates.set(a.key, 'above the last stream id');
      await Promise.all(processed.map(async (a, i) => front.forward(a.stream, a.headers, await a.body, i < 3)));
      processed.forEach((a, i) => fates.set(a.key, i < 3 ? 'answered' : 'applied, unanswered'));
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, processed[5].stream.id);
      session.ping(() => session.destroy());
    };
    front = await startFront(backend, (a) => {
      const session = a.stream.session as ServerHttp2Session;
      first ??= session;
      if (session !== first) return 'answer';
      if (held.length < 12) {
        held.push(a);
        if (held.length === 12) void goAway(session);
      } else fates.set(a.key, 'above the last stream id');
      return 'script';
    });
    // Room for the 12 streams the server waits for (the adaptive limit starts at 8).
    const { results, reasons } = await feedThrough(front, ops, { connections: 1, inflight: 32 });

    const byFate = (fate: Fate): Op[] => ops.filter((o) => fates.get(keyOfOp(o)) === fate);
    const increments = (list: Op[]): Op[] => list.filter((o) => o.update !== undefined);
    // Each fate met both kinds of operation.
    for (const fate of ['answered', 'applied, unanswered', 'above the last stream id'] as const) {
      expect(byFate(fate).length - increments(byFate(fate)).length, fate).toBeGreaterThan(0);
      expect(increments(byFate(fate)).length, fate).toBeGreaterThan(0);
    }
    for (const op of ops) {
      const key = keyOfOp(op);
      const fate = fates.get(key);
      const r = results.get(key)!;
      const why = `${key}: ${fate ?? 'on a later connection'}`;
      if (fate === 'applied, unanswered' && op.update !== undefined) {
        // Maybe applied, not safe to repeat: sent once, failed with the connection's end as its reason (node's
        // server resets the open streams with NO_ERROR as it closes).
        expect(r.ok, why).toBe(false);
        expect(front.seen.get(key), why).toBe(1);
        expect(reasons.get(`update ${op.update as string}`), why).toMatchObject({
          code: 'VB_TRANSPORT',
          attempts: 1,
          message: expect.stringMatching(
            /^(HTTP\/2 stream reset by the server: (INTERNAL_ERROR|NO_ERROR)|other side closed); not sent again: it may have been applied/,
          ),
        });
      } else {
        expect(r.ok, why).toBe(true);
        // Above the last stream id: sent again by the pool, unseen by the feed; applied, unanswered and safe:
        // retried by the feed.
        expect(r.attempts, why).toBe(fate === 'applied, unanswered' ? 2 : 1);
        expect(front.seen.get(key), why).toBe(fate === undefined || fate === 'answered' ? 1 : 2);
        expect(front.forwarded.get(key), why).toBe(fate === 'applied, unanswered' ? 2 : 1);
      }
    }
    // Every increment applied exactly once: those above the last stream id were never processed the first time.
    for (let k = 0; k < 30; k++) expect(backend.store.get(`id:ns:music::c${k}`)!.fields.n, `c${k}`).toBe(1);
    const puts = storeMap(backend);
    for (const id of puts.keys()) if (id.includes('::c')) puts.delete(id);
    expect(puts).toEqual(expectedStore(ops.filter((o) => o.put !== undefined)));
  });
});
