import { afterEach, describe, expect, it } from 'vitest';
import { DocumentClient } from '../../src/http/document-client.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { startRecordingServer } from './recording-server.js';

describe('DocumentClient', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('sends each operation with its method, encoded path, query and wrapped fields', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    const client = new DocumentClient({ endpoint: server.url, headers: { authorization: 'Bearer t' } });
    cleanups.push(() => client.close());

    const put = await client.put('id:ns:music:n=42:a/b+c', '{"title":"x"}', {
      condition: 'music.year>1',
      route: 'default',
    });
    expect(put.status).toBe(200);
    expect(put.body.id).toBe('id:x:y::z');
    await client.update('id:ns:music:g=g1:k', { title: { assign: 'y' } }, { create: true });
    await client.remove('id:ns:music::r', { dryRun: true });
    await client.get('id:ns:music::r', { fieldSet: '[all]', cluster: 'c' });

    const [p, u, r, g] = server.requests;
    expect(p.method).toBe('POST');
    expect(p.url).toBe('/document/v1/ns/music/number/42/a%2Fb%2Bc?condition=music.year%3E1&route=default');
    expect(p.body.toString()).toBe('{"fields":{"title":"x"}}');
    expect(p.headers.authorization).toBe('Bearer t');
    expect(p.headers['content-type']).toBe('application/json');
    expect(u.method).toBe('PUT');
    expect(u.url).toBe('/document/v1/ns/music/group/g1/k?create=true');
    expect(JSON.parse(u.body.toString())).toEqual({ fields: { title: { assign: 'y' } } });
    expect(r.method).toBe('DELETE');
    expect(r.url).toBe('/document/v1/ns/music/docid/r?dryRun=true');
    expect(g.method).toBe('GET');
    expect(g.url).toBe('/document/v1/ns/music/docid/r?cluster=c&fieldSet=%5Ball%5D');
  });

  it('resolves non-2xx statuses and wraps non-JSON bodies', async () => {
    const server = await startRecordingServer((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ pathId: '/p', id: 'id:a:b::c' }));
      } else {
        res.writeHead(502, { 'content-type': 'text/html', 'retry-after': '3' });
        res.end('<html>bad gateway</html>');
      }
    });
    cleanups.push(server.close);
    const client = new DocumentClient({ endpoint: `${server.url}/prefix/` });
    cleanups.push(() => client.close());
    const got = await client.get('id:a:b::c');
    expect(got.status).toBe(404);
    expect(got.body).toEqual({ pathId: '/p', id: 'id:a:b::c' });
    const put = await client.put('id:a:b::c', {});
    expect(put.status).toBe(502);
    expect(put.body).toEqual({ message: '<html>bad gateway</html>' });
    expect(put.headers['retry-after']).toBe('3');
    expect(server.requests[0].url).toBe('/prefix/document/v1/a/b/docid/c');
  });

  it('rejects with VB_UNREACHABLE when nothing listens', async () => {
    const server = await startRecordingServer();
    const url = server.url;
    await server.close();
    const client = new DocumentClient({ endpoint: url });
    cleanups.push(() => client.close());
    const err = await client.get('id:a:b::c').catch((e: unknown) => e);
    expect(isVespaBulkError(err, 'VB_UNREACHABLE')).toBe(true);
    expect((err as Error).message).toMatch(
      /^nothing answers at http:\/\/127\.0\.0\.1:\d+: connection refused \(ECONNREFUSED\)$/,
    );
  });

  it('rejects a malformed id before sending', async () => {
    const client = new DocumentClient({ endpoint: 'http://127.0.0.1:9' });
    cleanups.push(() => client.close());
    await expect(client.get('nope')).rejects.toMatchObject({ code: 'VB_BAD_DOCUMENT_ID' });
  });
});
