import { describe, expect, it } from 'vitest';
import { useDocumentServer } from './document-server-fixture.js';

/*
 * The simulator answers bad requests as the service's DocumentV1ApiHandler does: the order of its checks and its
 * messages, quoted from the handler, its test (DocumentV1ApiTest) and the parsers it uses. One content cluster,
 * so that what the handler requires even then is seen.
 */

const sim = useDocumentServer({ clusters: ['content'] });
const { call } = sim;
const q = encodeURIComponent;

const jacksonSource = '[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled)';

function seed(count: number): void {
  sim.server.store.seed(
    Array.from({ length: count }, (_, i) => ({ id: `id:ns:music:g=troupe:doc${i}`, fields: { i, title: `t${i}` } })),
  );
}

async function refused(
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<string> {
  const r = await call(method, path, body, headers);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(400);
  expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
  expect(r.json.pathId).toBe(path.split('?')[0]);
  return r.json.message as string;
}

describe('bulk operations ask for their parameters in the handler order', () => {
  it('copy asks for destinationCluster, then selection, then cluster, even with one content cluster', async () => {
    seed(2);
    const path = '/document/v1/ns/music/docid';
    expect(await refused('POST', path)).toBe("Must specify 'destinationCluster' at '/document/v1/ns/music/docid'");
    expect(await refused('POST', `${path}?destinationCluster=content`)).toBe(
      "Must specify 'selection' at '/document/v1/ns/music/docid'",
    );
    expect(await refused('POST', `${path}?destinationCluster=content&selection=true`)).toBe(
      "Must specify 'cluster' at '/document/v1/ns/music/docid'",
    );
    const done = await call('POST', `${path}?destinationCluster=content&selection=true&cluster=content`);
    expect(done.status).toBe(200);
    expect(done.json.documentCount).toBe(2);
  });

  it('update-where asks for cluster before it looks at the body or the selection, then for the selection', async () => {
    seed(2);
    const path = '/document/v1/ns/music/group/troupe';
    expect(await refused('PUT', `${path}?selection=false`, 'not JSON at all')).toBe(
      "Must specify 'cluster' at '/document/v1/ns/music/group/troupe'",
    );
    expect(await refused('PUT', `${path}?cluster=content`, 'not JSON at all')).toBe(
      "Must specify 'selection' at '/document/v1/ns/music/group/troupe'",
    );
    expect(sim.server.store.all('content').map((d) => d.fields.title)).toEqual(['t0', 't1']);
  });

  it('delete-where asks for the selection, then the cluster (the handler reads them in that order for a delete)', async () => {
    seed(2);
    expect(await refused('DELETE', '/document/v1/')).toBe("Must specify 'selection' at '/document/v1/'");
    expect(await refused('DELETE', '/document/v1/?selection=true')).toBe("Must specify 'cluster' at '/document/v1/'");
    expect(sim.server.store.size('content')).toBe(2);
  });

  it('refuses dryRun on a bulk operation before anything else', async () => {
    seed(1);
    expect(await refused('DELETE', '/document/v1/ns/music/docid/?dryRun=true')).toBe(
      "May not specify 'dryRun' at '/document/v1/ns/music/docid/'",
    );
    expect(sim.server.store.size('content')).toBe(1);
  });
});

describe('request bodies', () => {
  it('skips top-level keys other than fields, condition and create in put, update and update-where', async () => {
    const stray = {
      'extra-ignored-field': { foo: [{}], bar: null },
      remove: 'id:ns:type::ignored',
      put: 'id:ns:type::ignored',
    };
    expect(
      (await call('POST', '/document/v1/ns/music/group/troupe/one', { ...stray, fields: { title: 'put' }, post: 'x' }))
        .status,
    ).toBe(200);
    expect(
      (
        await call('PUT', '/document/v1/ns/music/group/troupe/two?create=true', {
          fields: { title: { assign: 'updated' } },
          ...stray,
        })
      ).status,
    ).toBe(200);
    const where = await call('PUT', `/document/v1/ns/music/docid?selection=true&cluster=content`, {
      ...stray,
      fields: { year: { assign: 2001 } },
      create: true,
    });
    expect(where.status).toBe(200);
    expect(sim.server.store.get('content', 'id:ns:music:g=troupe:one')?.fields).toEqual({ title: 'put', year: 2001 });
    expect(sim.server.store.get('content', 'id:ns:music:g=troupe:two')?.fields).toEqual({
      title: 'updated',
      year: 2001,
    });
  });

  it('answers a POST without a body: expected start of root object, got null', async () => {
    expect(await refused('POST', `/document/v1/ns/music/number/1/two?condition=${q('test it')}`, '')).toBe(
      'expected start of root object, got null',
    );
  });

  it("answers a body that is not JSON with Jackson's message and where it stopped, in bytes", async () => {
    const path = '/document/v1/ns/music/number/1/two';
    // The handler's own test: the unexpected character is read whole (three bytes) before it is reported.
    expect(await refused('POST', path, '{  ┻━┻︵ \\(°□°)/ ︵ ┻━┻}')).toBe(
      `failed parsing document: Unexpected character ('┻' (code 9531 / 0x253b)): was expecting double-quote to start field name\n at ${jacksonSource}; line: 1, column: 6]`,
    );
    expect(await refused('POST', path, '{ x }')).toBe(
      `failed parsing document: Unexpected character ('x' (code 120)): was expecting double-quote to start field name\n at ${jacksonSource}; line: 1, column: 3]`,
    );
    expect(await refused('PUT', path, 'hello world')).toBe(
      `failed parsing document: Unrecognized token 'hello': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at ${jacksonSource}; line: 1, column: 7]`,
    );
    expect(await refused('POST', path, '[]')).toBe('expected start of root object, got START_ARRAY');
    expect(await refused('POST', path, '{"fields":{}')).toBe(
      `failed parsing document: Unexpected end-of-input: expected close marker for Object (start marker at ${jacksonSource}; line: 1, column: 1])\n at ${jacksonSource}; line: 1, column: 13]`,
    );
  });

  it('answers a body without fields: document is missing the required "fields" field', async () => {
    const path = '/document/v1/ns/music/number/1/two';
    expect(await refused('POST', path, { condition: 'true' })).toBe('document is missing the required "fields" field');
    expect(await refused('PUT', path, {})).toBe('document is missing the required "fields" field');
    expect(await refused('PUT', '/document/v1/ns/music/docid?selection=true&cluster=content', { create: true })).toBe(
      'document is missing the required "fields" field',
    );
  });
});

describe('query parameters and headers', () => {
  it("refuses dryRun on a get and on a visit: May not specify 'dryRun'", async () => {
    expect(await refused('GET', '/document/v1/ns/music/number/1/two?dryRun=true')).toBe(
      "May not specify 'dryRun' at '/document/v1/ns/music/number/1/two'",
    );
    expect(await refused('GET', '/document/v1/?dryRun=false')).toBe("May not specify 'dryRun' at '/document/v1/'");
  });

  it('answers an Accept header that does not parse with the pointer to the documentation', async () => {
    expect(
      await refused('GET', '/document/v1?cluster=content&stream=true', undefined, { accept: 'Vazelina Bilopphoggers' }),
    ).toBe(
      'The request contained an unparseable HTTP Accept header. See: https://docs.vespa.ai/en/reference/api/document-v1.html#accept',
    );
  });

  it("refuses a continuation it cannot read: Failed parsing '<token>': ", async () => {
    expect(await refused('GET', '/document/v1/ns/music/docid?continuation=garbage')).toMatch(
      /^Failed parsing 'garbage': /,
    );
  });

  it('refuses a sliceId outside the slices', async () => {
    expect(await refused('GET', '/document/v1/ns/music/docid?slices=4&sliceId=4')).toContain(
      'sliceId must be in [0, 4), but was 4',
    );
  });

  it('reads timeout as the search container does: the leading number, an unknown unit as seconds, no number a 400', async () => {
    const put = (timeout: string) =>
      call('PUT', `/document/v1/ns/music/group/a/three?create=true&timeout=${q(timeout)}`, {
        fields: { artist: { assign: 'Lisa Ekdahl' } },
      });
    for (const timeout of ['1e1s', '5 s', '2m', '.5', '1ks']) expect((await put(timeout)).status, timeout).toBe(200);
    expect(await refused('GET', '/document/v1/ns/music/docid/x?timeout=abc')).toBe(
      "Failed parsing 'abc': Error parsing 'abc': Invalid number 'abc'",
    );
    expect(await refused('GET', '/document/v1/ns/music/docid/x?timeout=1.2.3s')).toBe(
      "Failed parsing '1.2.3s': Error parsing '1.2.3s': multiple points",
    );
  });
});

describe('paths', () => {
  it('reads /number/<n>/ as an unsigned 64-bit number', async () => {
    expect(await refused('GET', '/document/v1/ns/music/number/-1/x')).toBe(
      "Failed parsing '-1': Illegal leading minus sign on unsigned string -1.",
    );
    expect(await refused('GET', '/document/v1/ns/music/number/-1/')).toBe(
      "Failed parsing '-1': Illegal leading minus sign on unsigned string -1.",
    );
    expect(await refused('GET', '/document/v1/ns/music/number/18446744073709551616/x')).toBe(
      "Failed parsing '18446744073709551616': String value 18446744073709551616 exceeds range of unsigned long.",
    );
  });

  it('refuses a number above 2^63-1, which the id reads back as a signed long', async () => {
    // What the Go client sends for n=-1: no client can write a negative n through /document/v1.
    expect(await refused('POST', '/document/v1/ns/music/number/18446744073709551615/x', { fields: {} })).toBe(
      'For input string: "18446744073709551615"',
    );
    expect(await refused('GET', '/document/v1/ns/music/number/9223372036854775808/x')).toBe(
      'For input string: "9223372036854775808"',
    );
    expect((await call('POST', '/document/v1/ns/music/number/9223372036854775807/x', { fields: {} })).status).toBe(200);
    expect((await call('POST', '/document/v1/ns/music/number/%2B5/y', { fields: {} })).json.id).toBe(
      'id:ns:music:n=5:y',
    );
  });

  it('checks segments after URL-decoding: %2E and %2E%2E are refused like . and ..', async () => {
    expect(await refused('GET', '/document/v1/ns/music/docid/%2E%2E')).toBe(
      `path segments cannot be "", ".", or "..", but got: '..'`,
    );
    expect(await refused('POST', '/document/v1/ns/music/docid/%2e', { fields: {} })).toBe(
      `path segments cannot be "", ".", or "..", but got: '.'`,
    );
    expect(await refused('GET', '/document/v1/ns/music/docid/a//b')).toBe(
      `path segments cannot be "", ".", or "..", but got: ''`,
    );
    expect(sim.server.store.size('content')).toBe(0);
  });
});
