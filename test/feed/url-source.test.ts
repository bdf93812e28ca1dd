import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { Feeder, feed } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { redactUrl } from '../../src/feed/url-input.js';
import { checkResumable, type FeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { makeTestPki, type TestPki } from '../support/certs.js';
import { runCommand } from '../support/run-command.js';
import { tempDir } from './helpers.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A file server on 127.0.0.1 (https when given a cert) that records the Range header of each request. */
async function startFileServer(
  handler: Handler,
  pki?: TestPki,
): Promise<{ url: string; ranges: (string | undefined)[]; close: () => Promise<void> }> {
  const ranges: (string | undefined)[] = [];
  const wrapped: Handler = (req, res) => {
    ranges.push(req.headers.range);
    handler(req, res);
  };
  const server =
    pki === undefined
      ? createHttpServer(wrapped)
      : createHttpsServer({ cert: pki.pem.serverCert, key: pki.pem.serverKey }, wrapped);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${pki === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    ranges,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Serves `body` honouring `Range: bytes=N-` with a 206. */
function rangeHandler(body: Buffer, extraHeaders: Record<string, string> = {}): Handler {
  return (req, res) => {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m === null) {
      res.writeHead(200, { 'content-length': body.length, ...extraHeaders });
      res.end(body);
      return;
    }
    const from = Number(m[1]);
    res.writeHead(206, {
      'content-length': body.length - from,
      'content-range': `bytes ${from}-${body.length - 1}/${body.length}`,
      ...extraHeaders,
    });
    res.end(body.subarray(from));
  };
}

function corpus(n: number): { ops: object[]; text: Buffer } {
  const ops = Array.from({ length: n }, (_, i) => ({
    put: `id:ns:music::doc-${i}`,
    fields: { n: i, pad: 'x'.repeat(40) },
  }));
  return { ops, text: Buffer.from(ops.map((o) => JSON.stringify(o)).join('\n') + '\n') };
}

describe('feed from a URL', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });
  afterAll(() => pki.cleanup());
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function simulator(): Promise<DocumentServer> {
    const sim = await startDocumentServer({ port: 0 });
    cleanups.push(() => sim.close());
    return sim;
  }
  async function files(handler: Handler, https = false) {
    const s = await startFileServer(handler, https ? pki : undefined);
    cleanups.push(s.close);
    return s;
  }

  it('feeds a plain JSONL and a .gz body over https, trusting the server through ca', async () => {
    const sim = await simulator();
    const { text } = corpus(300);
    const gz = gzipSync(text);
    const s = await files(
      (req, res) => (req.url!.startsWith('/data.jsonl.gz') ? rangeHandler(gz)(req, res) : rangeHandler(text)(req, res)),
      true,
    );
    const plain = await feed(`${s.url}/data.jsonl?X-Amz-Signature=abc`, { endpoint: sim.url, tls: { ca: pki.pem.ca } });
    expect(plain.ok).toBe(300);
    const zipped = await feed(`${s.url}/data.jsonl.gz`, { endpoint: sim.url, tls: { ca: pki.pem.ca } });
    expect(zipped.ok).toBe(300);
    expect(sim.store.size()).toBe(300);
    expect(sim.store.get('id:ns:music::doc-299')!.fields.n).toBe(299);
  });

  it('decompresses a body marked Content-Encoding: gzip on a path without .gz', async () => {
    const sim = await simulator();
    const { text } = corpus(50);
    const s = await files(rangeHandler(gzipSync(text), { 'content-encoding': 'gzip' }));
    const out = await feed(`${s.url}/export`, { endpoint: sim.url });
    expect(out.ok).toBe(50);
    expect(sim.store.size()).toBe(50);
  });

  it('reconnects with Range from where a cut connection stopped: every operation once', async () => {
    const sim = await simulator();
    const { text } = corpus(400);
    const cut = Math.floor(text.length / 2) + 7;
    let first = true;
    const s = await files((req, res) => {
      if (first) {
        first = false;
        res.writeHead(200, { 'content-length': text.length });
        res.write(text.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      rangeHandler(text)(req, res);
    });
    const results: OperationResult[] = [];
    const out = await feed(`${s.url}/data.jsonl`, { endpoint: sim.url, onResult: (r) => void results.push(r) });
    expect(out.ok).toBe(400);
    expect(results.length).toBe(400);
    expect(new Set(results.map((r) => r.id)).size).toBe(400);
    expect(s.ranges).toEqual([undefined, `bytes=${cut}-`]);
    expect(sim.store.size()).toBe(400);
  });

  it('re-reads from the start and skips what it had when the server ignores Range', async () => {
    const sim = await simulator();
    const { text } = corpus(400);
    const cut = 5000;
    let first = true;
    const s = await files((_req, res) => {
      res.writeHead(200, { 'content-length': text.length });
      if (first) {
        first = false;
        res.write(text.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      res.end(text);
    });
    const results: OperationResult[] = [];
    const out = await feed(`${s.url}/data.jsonl`, { endpoint: sim.url, onResult: (r) => void results.push(r) });
    expect(out.ok).toBe(400);
    expect(new Set(results.map((r) => r.id)).size).toBe(400);
    expect(s.ranges).toEqual([undefined, `bytes=${cut}-`]);
  });

  it('resumes a stopped feed with a Range request at the checkpoint offset', async () => {
    const sim = await simulator();
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const { text } = corpus(400);
    let trickle = true;
    const s = await files((req, res) => {
      if (!trickle) return rangeHandler(text)(req, res);
      // The first run gets the body slowly, so it is stopped with most of the file unread.
      res.writeHead(200, { 'content-length': text.length });
      let at = 0;
      const step = () => {
        if (res.destroyed || at >= text.length) return void res.end();
        res.write(text.subarray(at, at + 2000));
        at += 2000;
        setTimeout(step, 30);
      };
      step();
    });
    const checkpoint = join(tmp.dir, 'cp.json');
    const abort = new AbortController();
    const results: OperationResult[] = [];
    const url = `${s.url}/data.jsonl?sig=first`;
    const first = new Feeder({
      endpoint: sim.url,
      signal: abort.signal,
      checkpoint,
      stopGraceMs: 1000,
      onResult: (r) => void results.push(r),
    });
    const running = first.run(url);
    while (results.length < 60) await new Promise((r) => setTimeout(r, 5));
    abort.abort();
    const outcome = await running;
    expect(outcome.stopped).toBe('interrupted');
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as {
      inputs: string[];
      position: { offset: number; line: number };
    };
    expect(saved.inputs).toEqual([`${s.url}/data.jsonl?…`]);
    expect(saved.position.offset).toBeGreaterThan(0);
    trickle = false;
    const before = s.ranges.length;
    // A fresh signature on the rerun still matches the checkpoint: inputs compare by origin and path.
    const second = await feed(`${s.url}/data.jsonl?sig=second`, { endpoint: sim.url, checkpoint });
    expect(s.ranges[before]).toBe(`bytes=${saved.position.offset}-`);
    expect(second.ok).toBeGreaterThan(0);
    expect(sim.store.size()).toBe(400);
    expect(sim.store.get('id:ns:music::doc-399')!.fields.n).toBe(399);
  });

  it('masks the query of a presigned URL in the failure reasons and on stderr', async () => {
    const sim = await simulator();
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const body = Buffer.from('{"put":"id:ns:music::ok","fields":{}}\nnot json at all\n');
    const s = await files(rangeHandler(body));
    const failures = join(tmp.dir, 'failures.jsonl');
    const url = `${s.url}/bucket/data.jsonl?X-Amz-Credential=AKIDSECRET&X-Amz-Signature=deadbeefsecret`;
    const r = await runCommand(['feed', url, '-t', sim.url, '--failures', failures]);
    expect(r.code).toBe(1);
    const reasons = readFileSync(`${failures}.reasons.jsonl`, 'utf8');
    expect(reasons).toContain(`${s.url}/bucket/data.jsonl?…`);
    for (const text of [reasons, r.stderr, r.stdout, readFileSync(failures, 'utf8')]) {
      expect(text).not.toContain('SECRET');
      expect(text).not.toContain('deadbeef');
    }
    expect(redactUrl('https://h.example/p/a.gz?x=1#frag')).toBe('https://h.example/p/a.gz?…');
  });

  it('matches a checkpoint to a URL by origin and path, not by its query', () => {
    const c: FeedCheckpoint = {
      version: 1,
      inputs: ['https://h.example/b/data.jsonl?…'],
      position: { input: 0, offset: 10, line: 2 },
      written: 'now',
      reason: 'interrupted',
      ok: 1,
      errors: 0,
    };
    expect(() => checkResumable(c, ['https://h.example/b/data.jsonl?sig=new'], undefined)).not.toThrow();
    expect(() => checkResumable(c, ['https://h.example/b/other.jsonl?sig=new'], undefined)).toThrow(
      expect.objectContaining({ code: 'VB_USAGE' }),
    );
  });
});
