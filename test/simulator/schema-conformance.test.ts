import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deployPackage, appPath, rawRequest } from '../deploy/fixtures.js';
import { kindsPackage } from '../schema/fixtures.js';
import { call as callVia } from './call.js';

/** After a deploy, puts and updates are judged against the package's schema over loopback, with the service's answers. */

let sim: Simulator;
let pool: Pool;
const call = (method: string, path: string, body?: unknown) => callVia(pool, method, path, body);
const doc = '/document/v1/ns/kinds/docid/a';
const id = 'id:ns:kinds::a';

const deploy = (files: Record<string, string>): Promise<any> => deployPackage(sim.configUrl!, files);

beforeAll(async () => {
  sim = await startSimulator({ port: 0, configPort: 0 });
  pool = new Pool(sim.url, { connections: 2 });
});
afterAll(async () => {
  await pool.close();
  await sim.close();
});
beforeEach(async () => {
  await deploy(kindsPackage());
  sim.documents.store.clear();
});

describe('puts after a deploy', () => {
  const valid: [string, unknown][] = [
    ['year', '2001'],
    ['year', 2001],
    ['big', 9007199254740993],
    ['score', '1e3'],
    ['flag', 'yes'],
    ['title', 1.5],
    ['tags', ['a', 'b']],
    ['weights', { a: 1 }],
    ['ratings', { fan: 4 }],
    ['ratings', [{ key: 'fan', value: 4 }]],
    ['nested', { sub: '3' }],
    ['where', { lat: 1.5, lng: 2 }],
    ['where', 'N37.4;W122.0'],
    ['emb', [1, 2, 3]],
    ['emb', { values: [1, 2, 3] }],
    ['sparse', { cells: [{ address: { key: 'a' }, value: 1 }] }],
  ];
  it.each(valid)('stores %s = %j', async (field, value) => {
    const r = await call('POST', doc, { fields: { [field]: value } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ pathId: doc, id });
  });

  const invalid: [string, unknown, string][] = [
    [
      'year',
      'notanumber',
      `In document '${id}': Could not parse field 'year' of type int: For input string: "notanumber"`,
    ],
    [
      'year',
      {},
      `In document '${id}': Could not parse field 'year' of type int: Expected a com.yahoo.document.datatypes.IntegerFieldValue but got an object`,
    ],
    [
      'title',
      'a\u0001',
      `In document '${id}': Could not parse field 'title' of type string: The string field value contains illegal code point 0x1`,
    ],
    [
      'tags',
      'x',
      `In document '${id}': Could not parse field 'tags' of type Array<string>: Class class java.lang.String not applicable to an class com.yahoo.document.datatypes.Array instance.`,
    ],
    [
      'tags',
      {},
      `In document '${id}': Could not parse field 'tags' of type Array<string>: Expected start of array, got START_OBJECT`,
    ],
    [
      'weights',
      [],
      `In document '${id}': Could not parse field 'weights' of type WeightedSet<string>: Expected start of JSON object, got START_ARRAY`,
    ],
    [
      'ratings',
      { fan: 'x' },
      `In document '${id}': Could not parse field 'ratings' of type Map<string,int>: For input string: "x"`,
    ],
    [
      'nested',
      { nope: 1 },
      `In document '${id}': Could not parse field 'nested' of type inner: Field 'nope' is not defined in struct type 'inner'`,
    ],
    [
      'where',
      { lat: 1 },
      `In document '${id}': Could not parse field 'where' of type position: Missing 'lng' attribute in geo position field`,
    ],
    [
      'emb',
      [1, 2],
      `In document '${id}': Could not parse field 'emb' of type tensor<float>(x[3]): Expected 3 values, but got 2`,
    ],
    ['nosuchfield', 1, "Field 'nosuchfield' is not defined in document type 'kinds'"],
  ];
  it.each(invalid)('refuses %s = %j with 400 and the service message', async (field, value, message) => {
    const r = await call('POST', doc, { fields: { [field]: value } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ pathId: doc, message });
    expect(sim.documents.store.size()).toBe(0);
  });

  it('answers the body-level errors and the unknown type', async () => {
    expect((await call('POST', doc, '')).json).toEqual({
      pathId: doc,
      message: 'expected start of root object, got null',
    });
    expect((await call('POST', doc, {})).json).toEqual({
      pathId: doc,
      message: 'document is missing the required "fields" field',
    });
    const house = '/document/v1/space/house/group/a/three';
    expect((await call('POST', house, { fields: {} })).json).toEqual({
      pathId: house,
      message: 'Document type house does not exist',
    });
    // Unknown top-level keys are skipped.
    expect((await call('POST', doc, { put: 'id:x:y::z', feilds: 1, fields: { year: 1 } })).status).toBe(200);
  });
});

describe('updates after a deploy', () => {
  it('answers 400 and 500 where the service does', async () => {
    const cases: [unknown, number, string][] = [
      [
        { nosuchfield: { assign: 1 } },
        400,
        "Error in 'nosuchfield': No field named 'nosuchfield' in document type 'kinds'",
      ],
      [{ year: { assign: 'notanumber' } }, 400, `Error in 'year': For input string: "notanumber"`],
      [{ year: { foo: 1 } }, 400, "Error in 'year': Operation 'foo' not implemented."],
      [{ title: { increment: 1 } }, 500, 'Expected numeric type, got string.'],
      [{ title: { add: 'x' } }, 500, 'Expected start of composite, got VALUE_STRING'],
      [{ ratings: { match: { element: 'fan', increment: 1 } } }, 500, 'Field type Map<string,int> not supported.'],
    ];
    for (const [fields, status, message] of cases) {
      const r = await call('PUT', doc, { fields });
      expect([r.status, r.json]).toEqual([status, { pathId: doc, message }]);
    }
    for (const fields of [
      { year: { assign: '2001' } },
      { year: { increment: 1 } },
      { tags: { add: ['x'] } },
      { weights: { add: { a: 2 } } },
      { 'ratings{fan}': { assign: 5 } },
    ]) {
      const r = await call('PUT', `${doc}?create=true`, { fields });
      expect(r.status, `${JSON.stringify(fields)}: ${r.text}`).toBe(200);
    }
  });

  it('keeps the exact text of a long beyond 2^53 through a partial update', async () => {
    expect((await call('POST', doc, '{"fields":{"big":9007199254740993,"score":1.50,"year":1}}')).status).toBe(200);
    expect((await call('PUT', doc, { fields: { year: { increment: 1 } } })).status).toBe(200);
    const got = await call('GET', doc);
    expect(got.text).toContain('"big":9007199254740993');
    expect(got.text).toContain('"score":1.50');
    expect(got.text).toContain('"year":2');
    // An assigned long keeps its text too, and arithmetic on one stays exact.
    expect((await call('PUT', doc, '{"fields":{"big":{"increment":2}}}')).status).toBe(200);
    expect((await call('GET', doc)).text).toContain('"big":9007199254740995');
  });
});

describe('dryRun', () => {
  it('answers 200 before reading the body, for any type, as vespa feed --speedtest needs', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const path = '/document/v1/test/test/docid/*';
      const r = await call(method, `${path}?dryRun=true`, method === 'DELETE' ? undefined : 'NOT JSON, NOT PARSED');
      expect([method, r.status, r.json]).toEqual([method, 200, { pathId: path, id: 'id:test:test::*' }]);
    }
    expect((await call('POST', `${doc}?dryRun=true`, { fields: { nosuchfield: 1 } })).status).toBe(200);
    expect(sim.documents.store.size()).toBe(0);
  });
  it('still checks the path and the parameters it reads', async () => {
    expect((await call('POST', '/document/v1/ns/kinds/number/x/a?dryRun=true', '{}')).status).toBe(400);
    expect((await call('POST', `${doc}?dryRun=`, '{}')).json).toEqual({
      pathId: doc,
      message: "Expected non-empty value for request property 'dryRun'",
    });
    expect((await call('GET', `${doc}?dryRun=true`)).status).toBe(400);
    // dryRun=false is an ordinary operation.
    expect((await call('POST', `${doc}?dryRun=false`, { fields: { year: 'x' } })).status).toBe(400);
  });
});

describe('document-api settings', () => {
  it('skips undefined fields with X-Vespa-Ignored-Fields when ignore-undefined-fields is on', async () => {
    await deploy(kindsPackage('<document-api><ignore-undefined-fields>true</ignore-undefined-fields></document-api>'));
    const r = await call('POST', doc, { fields: { year: 1, nosuchfield: 1 } });
    expect(r.status).toBe(200);
    expect(r.headers['x-vespa-ignored-fields']).toBe('true');
    expect((await call('GET', doc)).json.fields).toEqual({ year: 1 });
    const u = await call('PUT', doc, { fields: { nosuchfield: { assign: 1 } } });
    expect([u.status, u.headers['x-vespa-ignored-fields']]).toEqual([200, 'true']);
    const plain = await call('POST', doc, { fields: { year: 2 } });
    expect(plain.headers['x-vespa-ignored-fields']).toBeUndefined();
  });
  it('answers 404 when the container has no document-api', async () => {
    await deploy(kindsPackage(''));
    const r = await call('POST', doc, { fields: { year: 1 } });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({
      pathId: doc,
      message:
        'Document API is not configured in this cluster. See https://docs.vespa.ai/en/reference/services/container.html#document-api',
    });
  });
  it('is schema-less again once the application is deleted', async () => {
    const del = await rawRequest(sim.configUrl!, 'DELETE', appPath);
    expect(del.status, del.text).toBe(200);
    expect((await call('POST', '/document/v1/ns/anything/docid/a', { fields: { whatever: 'x' } })).status).toBe(200);
  });
});
