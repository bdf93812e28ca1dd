import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { useDocumentServer } from './document-server-fixture.js';

const sim = useDocumentServer({ clusters: ['content', 'other'], maxBodyBytes: 64 * 1024 });

const { call } = sim;

/** After each piece of bad input the server must still answer ordinary requests. */
async function stillServes(): Promise<void> {
  const put = await call('POST', '/document/v1/ns/music/docid/alive', { fields: { ok: true } });
  expect(put.status).toBe(200);
}

describe('single-document operations', () => {
  it('puts, gets, updates and removes on the plain path with the exact bodies', async () => {
    const path = '/document/v1/ns/music/docid/one';
    const put = await call('POST', path, { fields: { title: 'T', year: 1999 } });
    expect(put.status).toBe(200);
    expect(put.headers['content-type']).toBe('application/json; charset=UTF-8');
    expect(put.text).toBe('{"pathId":"/document/v1/ns/music/docid/one","id":"id:ns:music::one"}');

    const got = await call('GET', path);
    expect(got.status).toBe(200);
    expect(got.json).toEqual({ pathId: path, id: 'id:ns:music::one', fields: { title: 'T', year: 1999 } });
    expect(Object.keys(got.json)).toEqual(['pathId', 'id', 'fields']);

    const upd = await call('PUT', path, { fields: { year: { increment: 1 }, title: { assign: 'U' } } });
    expect(upd.status).toBe(200);
    expect(upd.json).toEqual({ pathId: path, id: 'id:ns:music::one' });
    expect(sim.server.store.get('id:ns:music::one')?.fields).toEqual({ title: 'U', year: 2000 });

    const del = await call('DELETE', path);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ pathId: path, id: 'id:ns:music::one' });
    expect(sim.server.store.get('id:ns:music::one')).toBeUndefined();

    const missing = await call('GET', path);
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('{"pathId":"/document/v1/ns/music/docid/one","id":"id:ns:music::one"}');
  });

  it('stores what a get returns, whatever the body layout', async () => {
    const bodies = [
      '{"fields":{"a":1},"fields":{"b":2}}',
      '{\n  "fields": {\n    "a": [1, 2]\n  }\n}',
      '{"fields":{"t":"has \\"fields\\" inside"}}',
    ];
    for (const body of bodies) {
      expect((await call('POST', '/document/v1/ns/music/docid/layout', body)).status).toBe(200);
      const got = await call('GET', '/document/v1/ns/music/docid/layout');
      expect(got.json.fields).toEqual(JSON.parse(body).fields);
      const visit = await call('GET', '/document/v1/ns/music/docid/?cluster=content&stream=true', undefined, {
        accept: 'application/jsonl',
      });
      expect(JSON.parse(visit.text.split('\n')[0]).fields).toEqual(JSON.parse(body).fields);
    }
  });

  it('serves the number and group forms, and keeps the raw path as pathId', async () => {
    const n = await call('POST', '/document/v1/ns/music/number/42/a%2Fb', { fields: { x: 1 } });
    expect(n.json).toEqual({ pathId: '/document/v1/ns/music/number/42/a%2Fb', id: 'id:ns:music:n=42:a/b' });
    const g = await call('POST', '/document/v1/ns/music/group/my%20group/x/y', { fields: { x: 2 } });
    expect(g.json.id).toBe('id:ns:music:g=my group:x/y');
    const plus = await call('POST', '/document/v1/ns/music/docid/a+b%2Bc', { fields: {} });
    expect(plus.json.id).toBe('id:ns:music::a b+c');
    expect((await call('GET', '/document/v1/ns/music/group/my%20group/x/y')).json.fields).toEqual({ x: 2 });
    expect(sim.server.store.get('id:ns:music:n=42:a/b')?.fields).toEqual({ x: 1 });
  });

  it('adds a trace after the id when tracelevel > 0', async () => {
    const put = await call('POST', '/document/v1/ns/music/docid/t?tracelevel=3', { fields: { a: 1 } });
    expect(put.status).toBe(200);
    expect(Object.keys(put.json)).toEqual(['pathId', 'id', 'trace']);
    expect(Array.isArray(put.json.trace)).toBe(true);
    expect(put.json.trace[0].message).toEqual(expect.any(String));
    const bad = await call('GET', '/document/v1/ns/music/docid/t?tracelevel=10');
    expect(bad.status).toBe(400);
  });

  it('answers update and remove of a missing document with 200, and creates with create=true', async () => {
    const path = '/document/v1/ns/music/docid/ghost';
    expect((await call('PUT', path, { fields: { a: { assign: 1 } } })).status).toBe(200);
    expect(sim.server.store.get('id:ns:music::ghost')).toBeUndefined();
    expect((await call('DELETE', path)).status).toBe(200);
    const created = await call('PUT', `${path}?create=true`, { fields: { a: { assign: 1 }, n: { increment: 1 } } });
    expect(created.status).toBe(200);
    // The new document starts empty and the increment counts from the number default, 0.
    expect(sim.server.store.get('id:ns:music::ghost')?.fields).toEqual({ a: 1, n: 1 });
    await call('DELETE', path);
    expect((await call('PUT', path, { fields: { a: { assign: 2 } }, create: true })).status).toBe(200);
    expect(sim.server.store.get('id:ns:music::ghost')?.fields).toEqual({ a: 2 });
  });

  it('applies fieldSet on get', async () => {
    await call('POST', '/document/v1/ns/music/docid/f', { fields: { a: 1, b: 2, c: 3 } });
    expect((await call('GET', '/document/v1/ns/music/docid/f?fieldSet=music:a,c')).json.fields).toEqual({ a: 1, c: 3 });
    expect((await call('GET', '/document/v1/ns/music/docid/f?fieldSet=%5Bid%5D')).json.fields).toEqual({});
  });

  it('accepts gzip request bodies', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ fields: { text: 'z'.repeat(2000) } })));
    const put = await call('POST', '/document/v1/ns/music/docid/gz', body, {
      'content-encoding': 'gzip',
      'content-type': 'application/json',
    });
    expect(put.status).toBe(200);
    expect(sim.server.store.get('id:ns:music::gz')?.fields).toEqual({ text: 'z'.repeat(2000) });
    const broken = await call('POST', '/document/v1/ns/music/docid/gz', 'not gzip', { 'content-encoding': 'gzip' });
    expect(broken.status).toBe(400);
    expect(broken.json.message).toContain('gzip');
    await stillServes();
  });

  it('validates without writing on dryRun', async () => {
    const put = await call('POST', '/document/v1/ns/music/docid/dry?dryRun=true', { fields: { a: 1 } });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ pathId: '/document/v1/ns/music/docid/dry', id: 'id:ns:music::dry' });
    expect(sim.server.store.size()).toBe(0);
    sim.server.store.put('id:ns:music::dry', { a: 1 });
    expect(
      (await call('PUT', '/document/v1/ns/music/docid/dry?dryRun=true', { fields: { a: { assign: 2 } } })).status,
    ).toBe(200);
    expect((await call('DELETE', '/document/v1/ns/music/docid/dry?dryRun=true')).status).toBe(200);
    expect(sim.server.store.get('id:ns:music::dry')?.fields).toEqual({ a: 1 });
    // As in the service, a dry run is answered before the body is read: it is never parsed.
    expect((await call('POST', '/document/v1/ns/music/docid/dry?dryRun=true', 'NOT JSON, NOT PARSED')).status).toBe(
      200,
    );
    expect((await call('POST', '/document/v1/ns/music/docid/dry?dryRun=', { fields: {} })).json.message).toBe(
      "Expected non-empty value for request property 'dryRun'",
    );
  });

  it('sends single-document operations to the named cluster, else the first', async () => {
    await call('POST', '/document/v1/ns/music/docid/c?cluster=other', { fields: { where: 'other' } });
    await call('POST', '/document/v1/ns/music/docid/c', { fields: { where: 'content' } });
    expect(sim.server.store.get('other', 'id:ns:music::c')?.fields).toEqual({ where: 'other' });
    expect(sim.server.store.get('content', 'id:ns:music::c')?.fields).toEqual({ where: 'content' });
    const unknown = await call('GET', '/document/v1/ns/music/docid/c?cluster=nope');
    expect(unknown.status).toBe(400);
    expect(unknown.text).toBe(
      `{"pathId":"/document/v1/ns/music/docid/c","message":"Your Vespa deployment has no content cluster 'nope', only 'content', 'other'"}`,
    );
  });

  it('accepts timeout and route parameters', async () => {
    expect((await call('POST', '/document/v1/ns/music/docid/r?timeout=5s&route=default', { fields: {} })).status).toBe(
      200,
    );
    expect((await call('POST', '/document/v1/ns/music/docid/r?timeout=1000ms', { fields: {} })).status).toBe(200);
    const bad = await call('POST', '/document/v1/ns/music/docid/r?timeout=soon', { fields: {} });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("'soon'");
  });
});

describe('conditions', () => {
  const path = '/document/v1/ns/music/docid/c1';

  it('writes when the condition holds and answers 412 with the id when it does not', async () => {
    sim.server.store.put('id:ns:music::c1', { year: 2001 });
    const ok = await call('PUT', `${path}?condition=${encodeURIComponent('music.year==2001')}`, {
      fields: { year: { assign: 2002 } },
    });
    expect(ok.status).toBe(200);
    const failed = await call('PUT', `${path}?condition=${encodeURIComponent('music.year==2001')}`, {
      fields: { year: { assign: 2003 } },
    });
    expect(failed.status).toBe(412);
    expect(Object.keys(failed.json)).toEqual(['pathId', 'id', 'message']);
    expect(failed.json.id).toBe('id:ns:music::c1');
    expect(sim.server.store.get('id:ns:music::c1')?.fields).toEqual({ year: 2002 });

    expect((await call('POST', path, { fields: { year: 1 }, condition: 'music.year==5' })).status).toBe(412);
    expect((await call('DELETE', `${path}?condition=music.year%3D%3D5`)).status).toBe(412);
    expect((await call('DELETE', `${path}?condition=music.year%3D%3D2002`)).status).toBe(200);
    expect(sim.server.store.get('id:ns:music::c1')).toBeUndefined();
  });

  it('answers 412 for a condition on a missing document, except put or update with create', async () => {
    const cond = `condition=${encodeURIComponent('music.year > 0')}`;
    expect((await call('POST', `${path}?${cond}`, { fields: { year: 1 } })).status).toBe(412);
    expect((await call('PUT', `${path}?${cond}`, { fields: { year: { assign: 1 } } })).status).toBe(412);
    expect((await call('DELETE', `${path}?${cond}`)).status).toBe(412);
    // put+create+condition: a missing document is written without checking the condition.
    const created = await call('POST', `${path}?create=true&condition=${encodeURIComponent('music.year == 99')}`, {
      fields: { year: 1 },
    });
    expect(created.status).toBe(200);
    expect(sim.server.store.get('id:ns:music::c1')?.fields).toEqual({ year: 1 });
    // ...but an existing one is checked.
    expect(
      (
        await call('POST', `${path}?create=true&condition=${encodeURIComponent('music.year == 99')}`, {
          fields: { year: 2 },
        })
      ).status,
    ).toBe(412);
  });

  it('lets query parameters override the body condition and create', async () => {
    sim.server.store.put('id:ns:music::c1', { year: 1 });
    const r = await call('PUT', `${path}?condition=${encodeURIComponent('music.year==1')}`, {
      fields: { year: { assign: 2 } },
      condition: 'music.year==999',
    });
    expect(r.status).toBe(200);
    const noCreate = await call('PUT', '/document/v1/ns/music/docid/new?create=false', {
      fields: { a: { assign: 1 } },
      create: true,
    });
    expect(noCreate.status).toBe(200);
    expect(sim.server.store.get('id:ns:music::new')).toBeUndefined();
  });

  it('answers a bad condition with 400 naming the position', async () => {
    sim.server.store.put('id:ns:music::c1', { year: 1 });
    const r = await call('PUT', `${path}?condition=${encodeURIComponent('music.year >')}`, {
      fields: { year: { assign: 2 } },
    });
    expect(r.status).toBe(400);
    expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
    expect(r.json.message).toMatch(/position \d+/);
    await stillServes();
  });
});

describe('document types', () => {
  it('accepts any type until types are set, then refuses others with 400', async () => {
    expect((await call('POST', '/document/v1/ns/anything/docid/a', { fields: {} })).status).toBe(200);
    sim.server.setDocumentTypes(['music']);
    const r = await call('POST', '/document/v1/ns/anything/docid/a', { fields: {} });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain('unknown document type');
    expect(r.json.message).toContain("'anything'");
    expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
    expect((await call('GET', '/document/v1/ns/anything/docid/')).status).toBe(400);
    await stillServes();
  });
});

describe('bad input', () => {
  it("answers bad JSON with 400 and the parser's message", async () => {
    const r = await call('POST', '/document/v1/ns/music/docid/j', '{"fields": {"a": }');
    expect(r.status).toBe(400);
    expect(r.json.pathId).toBe('/document/v1/ns/music/docid/j');
    // Met while the fields are read (the service, knowing the field's type, names it before this).
    expect(r.json.message).toMatch(
      /failed reading document JSON: Unexpected character \('}' \(code 125\)\): expected a valid value .*\n at \[Source: REDACTED .*; line: 1, column: 18\]$/,
    );
    expect(r.json.id).toBeUndefined();
    await stillServes();
  });

  it('refuses a put without fields or with non-object fields, and skips other keys', async () => {
    const r = await call('POST', '/document/v1/ns/music/docid/j', { condition: 'true' });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe('document is missing the required "fields" field');
    const list = await call('POST', '/document/v1/ns/music/docid/j', { fields: [1] });
    expect(list.status).toBe(400);
    expect(list.json.message).toBe('expected start of JSON object, but got START_ARRAY');
    // The document parser skips stray keys (only the feed file format is strict about them).
    expect((await call('POST', '/document/v1/ns/music/docid/j', { fields: { a: 1 }, bogus: 1 })).status).toBe(200);
    expect(sim.server.store.get('content', 'id:ns:music::j')?.fields).toEqual({ a: 1 });
    expect((await call('POST', '/document/v1/ns/music/docid/j', '')).status).toBe(400);
    await stillServes();
  });

  it('names an unsupported update operation', async () => {
    const r = await call('PUT', '/document/v1/ns/music/docid/j', { fields: { f: { explode: 1 } } });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("Unknown update operation 'explode' on field 'f'");
    await stillServes();
  });

  it('refuses ., .. and empty segments and malformed numbers with 400', async () => {
    for (const path of [
      '/document/v1/ns/music/docid/..',
      '/document/v1/ns/music/docid/a/./b',
      '/document/v1/ns/music/docid/a//b',
      '/document/v1/ns/music/number/abc/x',
      '/document/v1/ns/music/docid/%E0%A4%A',
    ]) {
      const r = await call('GET', path);
      expect(r.status, path).toBe(400);
      expect(r.json.pathId).toBe(path);
      expect(r.json.message).toEqual(expect.any(String));
    }
    await stillServes();
  });

  it('answers unknown paths with 404 and the handler body', async () => {
    const r = await call('GET', '/document/v1/ns/music/nothing/a');
    expect(r.status).toBe(404);
    expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
    expect(r.json.message).toMatch(/^Nothing at '\/document\/v1\/ns\/music\/nothing\/a'/);
    expect((await call('GET', '/elsewhere')).status).toBe(404);
    await stillServes();
  });

  it('answers a wrong method with 405 and Allow, and OPTIONS with 204 and Allow', async () => {
    const r = await call('PATCH', '/document/v1/ns/music/docid/a', '{}');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET,POST,PUT,DELETE');
    expect(r.json.message).toBe(
      "'PATCH' not allowed at '/document/v1/ns/music/docid/a'. Allowed methods are: GET, POST, PUT, DELETE",
    );
    const root = await call('PUT', '/document/v1/', '{}');
    expect(root.status).toBe(405);
    expect(root.headers.allow).toBe('GET,POST,DELETE');
    const options = await call('OPTIONS', '/document/v1/ns/music/docid/a');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toBe('GET,POST,PUT,DELETE');
    await stillServes();
  });

  it('answers a body over the limit with 413 and keeps serving on the same connection', async () => {
    const big = JSON.stringify({ fields: { blob: 'x'.repeat(100 * 1024) } });
    const r = await call('POST', '/document/v1/ns/music/docid/big', big);
    expect(r.status).toBe(413);
    expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
    expect(sim.server.store.get('id:ns:music::big')).toBeUndefined();
    // Chunked (no Content-Length) bodies are counted as they arrive.
    const chunked = await sim.pool.request({
      method: 'POST',
      path: '/document/v1/ns/music/docid/big2',
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 10; i++) yield Buffer.alloc(10 * 1024, 0x20);
        })(),
      ),
    });
    expect(chunked.statusCode).toBe(413);
    await chunked.body.text();
    await stillServes();
  });

  it('answers empty parameter values with 400', async () => {
    const r = await call('GET', '/document/v1/ns/music/docid/a?fieldSet=');
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("Expected non-empty value for request property 'fieldSet'");
  });
});

describe('container pages', () => {
  it('lists the document handler at / as the official CLI expects', async () => {
    const r = await call('GET', '/');
    expect(r.status).toBe(200);
    const handler = r.json.handlers.find(
      (h: any) => h.class === 'com.yahoo.document.restapi.resource.DocumentV1ApiHandler',
    );
    expect(handler.serverBindings).toContain('http://*/document/v1/*');
  });

  it('manages faults and documents on the admin paths', async () => {
    const got = await call('GET', '/_sim/faults');
    expect(got.json.queueLimit).toBe(256);
    const set = await call('PUT', '/_sim/faults', { latencyMs: 1 });
    expect(set.json.latencyMs).toBe(1);
    expect(sim.server.faults.get().latencyMs).toBe(1);
    expect((await call('PUT', '/_sim/faults', { errorRate: 5 })).status).toBe(400);
    sim.server.faults.set({ latencyMs: 0 });
    sim.server.store.put('id:ns:music::x', {});
    expect((await call('DELETE', '/_sim/documents')).status).toBe(200);
    expect(sim.server.store.size()).toBe(0);
  });
});
