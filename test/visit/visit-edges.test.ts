import { afterEach, describe, expect, it } from 'vitest';
import { visit } from '../../src/visit/visit.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { startCannedServer } from './canned-server.js';

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, maxRetries: 3 };

describe('visit() against a scripted peer', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('resumes a cut JSONL stream from the last token and delivers each document once', async () => {
    // First response cut after 25 documents (last token at 20): 20..24 come again from token 20, the second
    // response is cut after 3 of them, the third sends all 5 again: 3 + 5 repeats, none delivered twice.
    const server = await startCannedServer({
      documents: 100,
      tokenEvery: 10,
      cutAfter: (n) => (n === 0 ? 25 : n === 1 ? 3 : undefined),
    });
    cleanups.push(server.close);
    const ids: string[] = [];
    const v = visit({ endpoint: server.url, namespace: 'ns', documentType: 'doc', slices: 1, retry: fastRetry });
    for await (const d of v) ids.push(d.id);
    expect(ids).toEqual(server.ids);
    const report = await v.report;
    expect(report.ok).toBe(true);
    expect(report.slices[0].repeatsSkipped).toBe(8);
    expect(server.urls.map((u) => new URL(u, 'http://x').searchParams.get('continuation'))).toEqual([null, '20', '20']);
  });

  it('parses the plain JSON object when the server offers no JSONL, and resumes it too', async () => {
    const server = await startCannedServer({
      documents: 30,
      tokenEvery: 10,
      plain: true,
      perResponse: 12,
      cutAfter: (n) => (n === 1 ? 5 : undefined),
    });
    cleanups.push(server.close);
    const seen: Array<{ id: string; n: unknown }> = [];
    for await (const d of visit({
      endpoint: server.url,
      namespace: 'ns',
      documentType: 'doc',
      slices: 1,
      retry: fastRetry,
    })) {
      seen.push({ id: d.id, n: d.fields.n });
      expect(d.toFeedLine().toString()).toBe(`{"put":"${d.id}","fields":{"n":${String(d.fields.n)}}}`);
    }
    expect(seen.map((s) => s.id)).toEqual(server.ids);
    expect(seen.map((s) => s.n)).toEqual(server.ids.map((_, i) => i));
  });

  it('retries 429/503/504 and reports a slice that keeps failing with its token', async () => {
    const server = await startCannedServer({
      documents: 20,
      tokenEvery: 5,
      perResponse: 10,
      status: (n) => (n === 0 ? 429 : n === 1 ? 503 : n >= 3 ? 504 : undefined),
    });
    cleanups.push(server.close);
    const ids: string[] = [];
    const v = visit({ endpoint: server.url, namespace: 'ns', documentType: 'doc', slices: 1, retry: fastRetry });
    const err = await (async () => {
      for await (const d of v) ids.push(d.id);
    })().catch((e: unknown) => e);
    expect(isVespaBulkError(err, 'VB_VISIT')).toBe(true);
    expect(String((err as Error).message)).toContain('continuation 10');
    expect(ids).toEqual(server.ids.slice(0, 10));
    const report = await v.report;
    expect(report.slices[0]).toMatchObject({ status: 'failed', continuation: '10', status_code: 504 });
  });

  it('does not retry a 400 and says why', async () => {
    const server = await startCannedServer({ documents: 5, tokenEvery: 5, status: () => 400 });
    cleanups.push(server.close);
    // One bucket space, so that one request is all there is.
    const v = visit({ endpoint: server.url, bucketSpace: 'default', slices: 1, retry: fastRetry });
    const err = await (async () => {
      for await (const _ of v) void _;
    })().catch((e: unknown) => e);
    expect(String((err as Error).message)).toContain('scripted 400');
    expect(server.urls).toHaveLength(1);
  });

  it('stops requesting when the loop breaks', async () => {
    const server = await startCannedServer({ documents: 50, tokenEvery: 5, perResponse: 5 });
    cleanups.push(server.close);
    let n = 0;
    for await (const _ of visit({ endpoint: server.url, namespace: 'ns', documentType: 'doc', slices: 1 })) {
      void _;
      if (++n === 7) break;
    }
    const requests = server.urls.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(server.urls.length).toBe(requests);
    expect(requests).toBeLessThan(10);
  });
});
