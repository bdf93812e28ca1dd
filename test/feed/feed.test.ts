import { afterEach, describe, expect, it } from 'vitest';
import { createReadStream, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { Feeder, feed } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { awkwardIds, expectedStore, tempDir, type Op } from './helpers.js';

const fastRetries = { baseDelayMs: 2, maxDelayMs: 20, feedBlockBaseDelayMs: 5, feedBlockMaxDelayMs: 40 };

function storeMap(server: DocumentServer): Map<string, Record<string, unknown>> {
  return new Map(server.store.all().map((d) => [d.id, d.fields]));
}

function jsonl(ops: Op[]): string {
  return `${ops.map((o) => JSON.stringify(o)).join('\n')}\n`;
}

describe('feed against the simulator', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function setup(faults = {}) {
    const server = await startDocumentServer({ port: 0, faults });
    cleanups.push(() => server.close());
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    return { server, dir: tmp.dir };
  }

  it('stores a corpus of every operation type and id form exactly (JSONL and JSON array)', async () => {
    const { server, dir } = await setup();
    const ops: Op[] = [];
    awkwardIds.forEach((id, i) =>
      ops.push({ put: id, fields: { title: `t${i}`, n: i, tags: ['a', 'b'], nested: { s: 'x"}{' } } }),
    );
    ops.push({ id: 'id:ns:music::alias', fields: { title: 'by id key' } });
    ops.push({ update: awkwardIds[0], fields: { title: { assign: 'updated' }, n: { assign: null } } });
    ops.push({ update: 'id:ns:music::created', create: true, fields: { title: { assign: 'created by update' } } });
    ops.push({ update: 'id:ns:music::missing', fields: { title: { assign: 'not created' } } });
    ops.push({ remove: awkwardIds[1] });
    ops.push({ remove: 'id:ns:music::never-there' });
    ops.push({ put: 'id:ns:music::cond', fields: { year: 2001 } });
    ops.push({ update: 'id:ns:music::cond', condition: 'music.year == 2001', fields: { year: { assign: 2002 } } });
    const half = Math.floor(ops.length / 2);
    writeFileSync(join(dir, 'a.jsonl'), jsonl(ops.slice(0, half)));
    writeFileSync(join(dir, 'b.json'), JSON.stringify(ops.slice(half), null, 2));

    const results: OperationResult[] = [];
    const summary = await feed([join(dir, 'a.jsonl'), join(dir, 'b.json')], {
      endpoint: server.url,
      failures: join(dir, 'f.jsonl'),
      onResult: (r) => results.push(r),
    });

    expect(summary.errors).toBe(0);
    expect(summary.ok).toBe(ops.length);
    expect(summary.operations).toBe(ops.length);
    expect(results).toHaveLength(ops.length);
    expect(storeMap(server)).toEqual(expectedStore(ops));
    expect(server.store.get('id:ns:music::cond')!.fields.year).toBe(2002);
    expect(summary.responseCodes).toEqual({ '200': ops.length });
  });

  it('keeps operations on one id in input order under concurrency and errors', async () => {
    const { server, dir } = await setup({ errorRate: 0.2, errorStatuses: [429, 503], latencyMs: 1, seed: 7 });
    const ops: Op[] = [];
    for (let round = 0; round < 30; round++) {
      for (let d = 0; d < 20; d++) {
        const id = `id:ns:music::doc-${d}`;
        ops.push(
          round % 3 === 2 ? { update: id, fields: { round: { assign: round } } } : { put: id, fields: { round, d } },
        );
      }
    }
    writeFileSync(join(dir, 'ops.jsonl'), jsonl(ops));
    const order = new Map<string, number[]>();
    const summary = await feed(join(dir, 'ops.jsonl'), {
      endpoint: server.url,
      failures: join(dir, 'f.jsonl'),
      retryPolicy: fastRetries,
      onResult: (r) => order.set(r.id!, [...(order.get(r.id!) ?? []), r.line]),
    });
    expect(summary.errors).toBe(0);
    expect(summary.retries).toBeGreaterThan(0);
    for (const lines of order.values()) expect(lines).toEqual([...lines].sort((a, b) => a - b));
    for (let d = 0; d < 20; d++) expect(server.store.get(`id:ns:music::doc-${d}`)!.fields.round).toBe(29);
  });

  it('loses nothing with 20% of requests answered 429, 503 or 507 and connections cut mid-response', async () => {
    const { server, dir } = await setup({ errorRate: 0.2, errorStatuses: [429, 503, 507], closeRate: 0.05, seed: 3 });
    const ops: Op[] = [];
    for (let i = 0; i < 3000; i++) ops.push({ put: `id:ns:music::d${i % 2500}`, fields: { i } });
    for (let i = 0; i < 200; i++) ops.push({ update: `id:ns:music::d${i}`, fields: { u: { assign: i } } });
    for (let i = 200; i < 300; i++) ops.push({ remove: `id:ns:music::d${i}` });
    for (let i = 0; i < 50; i++) ops.push({ update: `id:ns:music::d${i}`, fields: { c: { increment: 1 } } });
    writeFileSync(join(dir, 'ops.jsonl'), jsonl(ops));
    const failed: OperationResult[] = [];
    const summary = await feed(join(dir, 'ops.jsonl'), {
      endpoint: server.url,
      failures: join(dir, 'f.jsonl'),
      retryPolicy: fastRetries,
      onResult: (r) => !r.ok && failed.push(r),
    });
    expect(summary.ok + summary.errors).toBe(ops.length);
    expect(summary.exceptions).toBeGreaterThan(0);
    expect(summary.throttled).toBeGreaterThan(0);
    // Only increments (not safe to repeat) may fail, after a cut connection or... nothing else.
    for (const f of failed) expect(ops[f.line - 1]).toHaveProperty('fields.c.increment');
    const failureLines = summary.errors === 0 ? [] : readFileSync(join(dir, 'f.jsonl'), 'utf8').trim().split('\n');
    expect(failureLines).toHaveLength(summary.errors);
    const expected = expectedStore(ops.filter((o) => !(o.fields as any)?.c));
    const actual = storeMap(server);
    // An increment is never applied twice: not resent by us, nor by undici after a cut pipelined connection.
    for (const doc of actual.values()) expect([undefined, 1]).toContain(doc.c);
    for (const doc of actual.values()) delete doc.c;
    expect(actual).toEqual(expected);
  });

  it('reports bad lines with their line numbers, feeds the rest, and the failure output feeds again cleanly', async () => {
    const { server, dir } = await setup({ feedBlock: true });
    const text = [
      '{"put":"id:ns:music::1","fields":{"a":1}}',
      '{"put":"id:ns:music::2","fields":{"a":2}',
      'this is not json',
      '{"put":"id:ns:music::3","fields":{"a":3},"extra":true}',
      '{"put":"bad-id","fields":{}}',
      '{"remove":"id:ns:music::4","fields":{}}',
      '{"update":"id:ns:music::5","create":true,"fields":{"a":{"assign":5}}}',
      '{"put":"id:ns:music::6","fields":{"a":6}}',
    ].join('\n');
    writeFileSync(join(dir, 'in.jsonl'), text);
    const failures = join(dir, 'failed.jsonl');
    const results: OperationResult[] = [];
    // Feed block: writes fail with 507 until the deadline, then land in the failure output.
    const first = await feed(join(dir, 'in.jsonl'), {
      endpoint: server.url,
      failures,
      deadlineMs: 300,
      retryPolicy: fastRetries,
      onResult: (r) => results.push(r),
    });
    expect(first.parseErrors).toBe(5);
    expect(first.errors).toBe(8);
    const bad = results.filter((r) => r.status === undefined).map((r) => [r.line, r.message]);
    expect(bad).toEqual([
      [2, expect.stringMatching(/invalid JSON/)],
      [3, 'not a JSON object'],
      [4, expect.stringMatching(/unknown key 'extra'/)],
      [5, expect.stringMatching(/invalid document id/)],
      [6, expect.stringMatching(/must not have 'fields'/)],
    ]);
    const failedText = readFileSync(failures, 'utf8');
    expect(failedText.split('\n')).toContain('this is not json');
    const reasons = readFileSync(`${failures}.reasons.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(reasons).toHaveLength(8);
    expect(reasons.find((r) => r.id === 'id:ns:music::6')).toMatchObject({
      status: 507,
      operation: 'put',
      inputLine: 8,
      input: join(dir, 'in.jsonl'),
    });
    expect(reasons.find((r) => r.id === 'id:ns:music::6').attempts).toBeGreaterThan(1);

    server.faults.set({ feedBlock: false });
    const again = await feed(failures, { endpoint: server.url, failures: join(dir, 'again.jsonl') });
    expect(again.ok).toBe(3);
    expect(again.parseErrors).toBe(5);
    expect([...storeMap(server).keys()].sort()).toEqual(['id:ns:music::1', 'id:ns:music::5', 'id:ns:music::6']);
    // Unreadable lines come out exactly as they went in.
    const againLines = readFileSync(join(dir, 'again.jsonl'), 'utf8').split('\n');
    expect(againLines).toContain('{"put":"id:ns:music::2","fields":{"a":2}');
    expect(againLines).toContain('this is not json');
  });

  it('waits out a feed block (507) and resumes by itself when it clears', async () => {
    const { server, dir } = await setup({ feedBlock: true });
    const ops = Array.from({ length: 200 }, (_, i) => ({ put: `id:ns:music::fb${i}`, fields: { i } }));
    writeFileSync(join(dir, 'in.jsonl'), jsonl(ops));
    let blocked = false;
    // Clear the block once the feeder has been meeting it for a while.
    const clear = setTimeout(() => {
      blocked = server.faults.get().feedBlock;
      server.faults.set({ feedBlock: false });
    }, 300);
    cleanups.push(() => clearTimeout(clear));
    const summary = await feed(join(dir, 'in.jsonl'), {
      endpoint: server.url,
      failures: join(dir, 'f.jsonl'),
      retryPolicy: fastRetries,
    });
    expect(blocked).toBe(true);
    expect(summary.ok).toBe(200);
    expect(summary.responseCodes['507']).toBeGreaterThan(0);
    expect(server.store.size()).toBe(200);
  });

  it('reads stdin, gzip files, Readable streams and async iterables of strings and objects', async () => {
    const { server, dir } = await setup();
    const make = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({ put: `id:ns:music::${prefix}${i}`, fields: { i } }));
    writeFileSync(join(dir, 'z.jsonl.gz'), gzipSync(jsonl(make('gz', 300))));
    const stdin = Readable.from([Buffer.from(jsonl(make('stdin', 100)))]);
    const s1 = await feed(['-', join(dir, 'z.jsonl.gz')], { endpoint: server.url, stdin, failures: false });
    expect(s1.ok).toBe(400);
    writeFileSync(join(dir, 'arr.json'), JSON.stringify(make('stream', 50)));
    const s2 = await feed(createReadStream(join(dir, 'arr.json')), { endpoint: server.url, failures: false });
    expect(s2.ok).toBe(50);
    async function* lines() {
      for (const op of make('iter', 20)) yield JSON.stringify(op);
      for (const op of make('obj', 20)) yield op;
    }
    const s3 = await feed(lines(), { endpoint: server.url, failures: false });
    expect(s3.ok).toBe(40);
    expect(server.store.size()).toBe(490);
  });

  it('splits the input between shards with no overlap', async () => {
    const { server, dir } = await setup();
    const ops = Array.from({ length: 500 }, (_, i) => ({ put: `id:ns:music::s${i}`, fields: { i } }));
    writeFileSync(join(dir, 'in.jsonl'), jsonl(ops));
    const seen: string[] = [];
    let total = 0;
    for (let i = 0; i < 3; i++) {
      const s = await feed(join(dir, 'in.jsonl'), {
        endpoint: server.url,
        shard: { index: i, count: 3 },
        failures: false,
        onResult: (r) => seen.push(r.id!),
      });
      expect(s.skipped).toBe(500 - s.ok);
      expect(s.ok).toBeGreaterThan(100);
      total += s.ok;
    }
    expect(total).toBe(500);
    expect(new Set(seen).size).toBe(500);
    expect(server.store.size()).toBe(500);
  });

  it('stops when the breaker opens and writes a checkpoint that resumes without skipping', async () => {
    const { server, dir } = await setup({ errorRate: 1, errorStatuses: [503] });
    const ops = Array.from({ length: 2000 }, (_, i) => ({ put: `id:ns:music::b${i}`, fields: { i } }));
    writeFileSync(join(dir, 'in.jsonl'), jsonl(ops));
    const checkpoint = join(dir, 'cp.json');
    const feeder = new Feeder({
      endpoint: server.url,
      failures: join(dir, 'f.jsonl'),
      checkpoint,
      halfOpenSeconds: 0.2,
      maxFailureSeconds: 0.6,
      maxRetries: 1000,
      retryPolicy: fastRetries,
    });
    const outcome = await feeder.run(join(dir, 'in.jsonl'));
    expect(outcome.stopped).toBe('breaker');
    expect(outcome.checkpointFile).toBe(checkpoint);
    const cp = JSON.parse(readFileSync(checkpoint, 'utf8'));
    expect(cp.position).toMatchObject({ input: 0, offset: 0, line: 1 });

    server.faults.set({ errorRate: 0 });
    const resumed = await feed(join(dir, 'in.jsonl'), { endpoint: server.url, resume: checkpoint, failures: false });
    expect(resumed.ok).toBe(2000);
    expect(server.store.size()).toBe(2000);
  });

  it('reports each result to the callback with the response body', async () => {
    const { server } = await setup();
    const results: OperationResult[] = [];
    await feed([{ put: 'id:ns:music::cb', fields: {} }], {
      endpoint: server.url,
      failures: false,
      onResult: (r) => results.push(r),
    });
    expect(results).toEqual([
      expect.objectContaining({
        ok: true,
        id: 'id:ns:music::cb',
        kind: 'put',
        status: 200,
        attempts: 1,
        line: 1,
        body: expect.objectContaining({ id: 'id:ns:music::cb' }),
      }),
    ]);
  });
});
