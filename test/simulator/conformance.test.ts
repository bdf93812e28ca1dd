import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { call as callWith } from './call.js';
import { useDocumentServer } from './document-server-fixture.js';

/*
 * Behaviour checked against the service's facts (vespa-facts.md) that the other server tests leave out:
 * exact messages the real handler uses, parameters on visits and bulk requests, timeouts, and the
 * document-type rule after a deploy. Every piece of bad input is followed by an ordinary request.
 */

const sim = useDocumentServer({ clusters: ['content', 'backup'], maxBodyBytes: 32 * 1024, visitChunkDocuments: 5 });

const { call } = sim;
const q = encodeURIComponent;

async function stillServes(): Promise<void> {
  expect((await call('POST', '/document/v1/ns/music/docid/alive', { fields: { ok: true } })).status).toBe(200);
  expect((await call('GET', '/document/v1/ns/music/docid/alive')).json.fields).toEqual({ ok: true });
}

function seed(count: number): void {
  sim.server.store.seed(
    Array.from({ length: count }, (_, i) => ({ id: `id:ns:music::doc${i}`, fields: { i, title: `t${i}` } })),
  );
}

describe('partial updates over HTTP', () => {
  it('counts from 0 on a field without a value: create=true with increment makes a counter', async () => {
    const path = '/document/v1/ns/music/docid/counter';
    for (let i = 0; i < 3; i++)
      expect((await call('PUT', `${path}?create=true`, { fields: { hits: { increment: 1 } } })).status).toBe(200);
    expect(sim.server.store.get('content', 'id:ns:music::counter')?.fields).toEqual({ hits: 3 });
    sim.server.store.put('id:ns:music::other', { title: 'x' });
    await call('PUT', '/document/v1/ns/music/docid/other', { fields: { d: { decrement: 2 }, m: { multiply: 7 } } });
    expect(sim.server.store.get('content', 'id:ns:music::other')?.fields).toEqual({ title: 'x', d: -2, m: 0 });
    // Without create, a missing document stays missing.
    expect((await call('PUT', '/document/v1/ns/music/docid/none', { fields: { hits: { increment: 1 } } })).status).toBe(
      200,
    );
    expect(sim.server.store.get('content', 'id:ns:music::none')).toBeUndefined();
  });

  it('answers operations on arrays, maps and weighted sets, and names a bad one', async () => {
    const path = '/document/v1/ns/music/docid/coll';
    await call('POST', path, { fields: { arr: [1, 2, 3], m: { a: 'x', b: 'y' }, ws: { red: 1, blue: 2 } } });
    const r = await call('PUT', path, {
      fields: {
        arr: { remove: [2] },
        'm{a}': { remove: 0 },
        ws: { match: { element: 'blue', increment: 3 } },
      },
    });
    expect(r.status).toBe(200);
    expect(sim.server.store.get('content', 'id:ns:music::coll')?.fields).toEqual({
      arr: [1, 3],
      m: { b: 'y' },
      ws: { red: 1, blue: 5 },
    });
    const bad = await call('PUT', path, { fields: { arr: { append: [4] } } });
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ pathId: path, message: "Unknown update operation 'append' on field 'arr'" });
    const byZero = await call('PUT', path, { fields: { n: { divide: 0 } } });
    expect(byZero.status).toBe(400);
    expect(byZero.json.message).toContain('zero');
    await stillServes();
  });
});

describe('paths', () => {
  it('names the illegal code point of a group, as the service does', async () => {
    const r = await call('GET', '/document/v1/ns/music/group/a%07b/x');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      pathId: '/document/v1/ns/music/group/a%07b/x',
      message: 'Illegal code point U0007 in group',
    });
    await stillServes();
  });
});

describe('document types after a deploy', () => {
  it('refuses an unknown type on every operation and on visits and bulk requests, with 400 and no id', async () => {
    sim.server.setDocumentTypes(['music']);
    const requests: Array<[string, string, unknown?]> = [
      ['GET', '/document/v1/ns/book/docid/a'],
      ['POST', '/document/v1/ns/book/docid/a', { fields: {} }],
      ['PUT', '/document/v1/ns/book/docid/a', { fields: { a: { assign: 1 } } }],
      ['DELETE', '/document/v1/ns/book/docid/a'],
      ['GET', '/document/v1/ns/book/number/7/a'],
      ['GET', '/document/v1/ns/book/docid/?cluster=content'],
      ['DELETE', `/document/v1/ns/book/docid/?cluster=content&selection=true`],
    ];
    for (const [method, path, body] of requests) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
      expect(r.json.message).toContain("'book'");
    }
    expect(sim.server.store.size()).toBe(0);
    await stillServes();
  });
});

describe('request bodies', () => {
  it('answers 413 when a gzip body decompresses beyond the limit, and keeps serving', async () => {
    // Small on the wire, well over 32 KiB once inflated.
    const body = gzipSync(Buffer.from(JSON.stringify({ fields: { blob: 'z'.repeat(200 * 1024) } })));
    expect(body.length).toBeLessThan(32 * 1024);
    const r = await call('POST', '/document/v1/ns/music/docid/bomb', body, { 'content-encoding': 'gzip' });
    expect(r.status).toBe(413);
    expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
    expect(sim.server.store.size()).toBe(0);
    const unknown = await call('POST', '/document/v1/ns/music/docid/enc', { fields: {} }, { 'content-encoding': 'br' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toContain("'br'");
    await stillServes();
  });

  it('takes gzip bodies over HTTP/2 cleartext, as the official feeder sends them', async () => {
    const session = http2.connect(sim.server.url);
    try {
      const fields = { text: 'g'.repeat(4000) };
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': '/document/v1/ns/music/docid/h2gz',
          'content-encoding': 'gzip',
          'content-type': 'application/json',
        });
        let s = 0;
        let t = '';
        stream.on('response', (h) => (s = Number(h[':status'])));
        stream.setEncoding('utf8');
        stream.on('data', (d) => (t += d));
        stream.on('end', () => resolve({ status: s, text: t }));
        stream.on('error', reject);
        stream.end(gzipSync(Buffer.from(JSON.stringify({ fields }))));
      });
      expect(status).toBe(200);
      expect(JSON.parse(text)).toEqual({ pathId: '/document/v1/ns/music/docid/h2gz', id: 'id:ns:music::h2gz' });
      expect(sim.server.store.get('content', 'id:ns:music::h2gz')?.fields).toEqual(fields);
    } finally {
      session.close();
    }
  });
});

describe('visit parameters', () => {
  const base = '/document/v1/ns/music/docid/?cluster=content';

  it('puts a trace after documentCount in plain visits and a sessionTrace line before the last line of a stream', async () => {
    seed(12);
    const plain = await call('GET', `${base}&tracelevel=2`);
    expect(plain.status).toBe(200);
    expect(Object.keys(plain.json)).toEqual(['pathId', 'documents', 'documentCount', 'trace', 'continuation']);
    expect(plain.json.trace[0]).toEqual({ message: expect.any(String) });
    const stream = await call('GET', `${base}&stream=true&tracelevel=2`, undefined, { accept: 'application/jsonl' });
    const lines = stream.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-3)).toEqual({ sessionStats: { documentCount: 12 } });
    expect(lines.at(-2)).toEqual({ sessionTrace: { trace: expect.any(Array) } });
    expect(lines.at(-1)).toEqual({ continuation: { percentFinished: 100 } });
    expect((await call('GET', `${base}&tracelevel=x`)).status).toBe(400);
  });

  it('reports tombstones as remove lines in a JSONL stream, counted in sessionStats', async () => {
    seed(6);
    await call('DELETE', '/document/v1/ns/music/docid/doc2');
    const r = await call('GET', `${base}&stream=true&includeRemoves=true`, undefined, { accept: 'application/jsonl' });
    const lines = r.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((o) => 'remove' in o)).toEqual([{ remove: 'id:ns:music::doc2' }]);
    expect(lines.filter((o) => 'put' in o)).toHaveLength(5);
    expect(lines).toContainEqual({ sessionStats: { documentCount: 6 } });
    const without = await call('GET', `${base}&stream=true`, undefined, { accept: 'application/jsonl' });
    expect(without.text).not.toContain('"remove"');
  });

  it('gives each slice the same documents in the same order on every visit while the corpus stands still', async () => {
    seed(40);
    const visitSlice = async (slice: number): Promise<string[]> => {
      const r = await call('GET', `${base}&stream=true&slices=4&sliceId=${slice}`, undefined, {
        accept: 'application/jsonl',
      });
      return r.text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((o) => o.put)
        .map((o) => o.put);
    };
    const first = await Promise.all([0, 1, 2, 3].map(visitSlice));
    const again = await Promise.all([0, 1, 2, 3].map(visitSlice));
    expect(again).toEqual(first);
    expect(new Set(first.flat()).size).toBe(40);
  });

  it('refuses bad numbers, timeouts and timestamps with the service messages', async () => {
    const cases: Array<[string, string | RegExp]> = [
      [`${base}&wantedDocumentCount=many`, `Failed parsing 'many': For input string: "many"`],
      [`${base}&wantedDocumentCount=-1`, 'wantedDocumentCount must be positive'],
      [`${base}&fromTimestamp=yesterday`, /^Failed parsing 'yesterday'/],
      [`${base}&fromTimestamp=10&toTimestamp=5`, 'toTimestamp must be greater than, or equal to, fromTimestamp'],
      [`${base}&timeout=forever`, /'forever'/],
      [`${base}&slices=0&sliceId=0`, /slices/],
      [`${base}&selection=${q('music.i >')}`, /position \d+/],
    ];
    for (const [path, message] of cases) {
      const r = await call('GET', path);
      expect(r.status, path).toBe(400);
      expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
      if (typeof message === 'string') expect(r.json.message).toBe(message);
      else expect(r.json.message).toMatch(message);
    }
    await stillServes();
  });
});

describe('bulk parameters', () => {
  const base = '/document/v1/ns/music/docid/?cluster=content';

  it('insists on a selection for delete-where and copy too', async () => {
    seed(3);
    const del = await call('DELETE', base);
    expect(del.status).toBe(400);
    expect(del.json.message).toBe("Must specify 'selection' at '/document/v1/ns/music/docid/'");
    const copy = await call('POST', `${base}&destinationCluster=backup`);
    expect(copy.status).toBe(400);
    expect(copy.json.message).toBe("Must specify 'selection' at '/document/v1/ns/music/docid/'");
    expect(sim.server.store.size('content')).toBe(3);
    expect(sim.server.store.size('backup')).toBe(0);
  });

  it('refuses dryRun, unknown clusters, bad JSON and unknown operations, changing nothing', async () => {
    seed(3);
    const sel = `&selection=${q('music.i >= 0')}`;
    const cases: Array<[string, string, unknown, string | RegExp]> = [
      ['DELETE', `${base}${sel}&dryRun=true`, undefined, "May not specify 'dryRun' at '/document/v1/ns/music/docid/'"],
      [
        'DELETE',
        `/document/v1/ns/music/docid/?cluster=nope${sel}`,
        undefined,
        "Your Vespa deployment has no content cluster 'nope', only 'content', 'backup'",
      ],
      [
        'POST',
        `${base}${sel}&destinationCluster=nope`,
        undefined,
        "Your Vespa deployment has no content cluster 'nope', only 'content', 'backup'",
      ],
      [
        'PUT',
        `${base}${sel}`,
        '{"fields": {',
        /^failed reading document JSON: Unexpected end-of-input: expected close marker for Object \(start marker at \[Source: REDACTED .*; line: 1, column: 12\]\)/,
      ],
      [
        'PUT',
        `${base}${sel}`,
        { fields: { title: { explode: 1 } } },
        "Unknown update operation 'explode' on field 'title'",
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
      if (typeof message === 'string') expect(r.json.message).toBe(message);
      else expect(r.json.message).toMatch(message);
    }
    expect(
      sim.server.store
        .all('content')
        .map((d) => d.fields.title)
        .sort(),
    ).toEqual(['t0', 't1', 't2']);
    expect(sim.server.store.size('backup')).toBe(0);
    await stillServes();
  });

  it('deletes across document types at the root, chunk by chunk until no continuation', async () => {
    seed(8);
    sim.server.store.put('id:ns:book::b1', { i: 100 });
    let continuation: string | undefined;
    let requests = 0;
    let total = 0;
    do {
      const r = await call(
        'DELETE',
        `/document/v1/?cluster=content&selection=true${continuation === undefined ? '' : `&continuation=${q(continuation)}`}`,
      );
      expect(r.status).toBe(200);
      total += r.json.documentCount;
      continuation = r.json.continuation;
      requests++;
    } while (continuation !== undefined && requests < 50);
    expect(total).toBe(9);
    expect(requests).toBeGreaterThan(1);
    expect(sim.server.store.size('content')).toBe(0);
  });
});

describe('timeouts and the handler queue', () => {
  it('answers visits and bulk requests 504 with the handler body when the latency outlasts the timeout', async () => {
    seed(3);
    sim.server.faults.set({ latencyMs: 300 });
    const visit = await call('GET', '/document/v1/ns/music/docid/?cluster=content&timeout=50ms');
    expect(visit.status).toBe(504);
    expect(visit.json).toEqual({ pathId: '/document/v1/ns/music/docid/', message: 'Timeout after 50ms' });
    const del = await call('DELETE', `/document/v1/ns/music/docid/?cluster=content&selection=true&timeout=0.05s`);
    expect(del.status).toBe(504);
    expect(del.json.message).toBe('Timeout after 50ms');
    expect(sim.server.store.size('content')).toBe(3);
  });

  it('answers 504 for an operation whose timeout passes while it waits for its turn, and never applies it', async () => {
    // One operation a second: the first starts at once, each later one waits for its turn and times out first.
    // (The 429 for a queue whose oldest operation waited over 3 s is in handler-queue.test.ts.)
    sim.server.faults.set({ maxOpsPerSecond: 1 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await call('POST', `/document/v1/ns/music/docid/q${i}?timeout=10ms`, { fields: {} })).status);
    expect(statuses).toEqual([200, 504, 504, 504]);
    expect(sim.server.store.size()).toBe(1);
    // Timed out at the head, they left the queue: nothing waits.
    expect(sim.server.stats().queue.waiting).toBe(0);
  });
});

describe('starting options', () => {
  it('applies faults given at start, and logs no requests unless asked', async () => {
    const writes = vi.spyOn(process.stderr, 'write');
    const started = await startDocumentServer({ port: 0, faults: { errorRate: 1, errorStatuses: [504] } });
    const p = new Pool(started.url);
    try {
      const r = await callWith(p, 'POST', '/document/v1/ns/music/docid/x', { fields: {} });
      expect(r.status).toBe(504);
      expect(Object.keys(r.json)).toEqual(['pathId', 'id', 'message']);
      expect(started.store.size()).toBe(0);
      const changed = await callWith(p, 'PUT', '/_sim/faults', { errorRate: 0 });
      expect(changed.json.errorRate).toBe(0);
      expect((await callWith(p, 'POST', '/document/v1/ns/music/docid/x', { fields: {} })).status).toBe(200);
      expect(writes.mock.calls.some(([chunk]) => String(chunk).includes('/document/v1/ns/music/docid/x'))).toBe(false);
    } finally {
      writes.mockRestore();
      await p.close();
      await started.close();
    }
  });
});
