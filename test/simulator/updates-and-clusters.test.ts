import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deployPackage, appPath, rawRequest } from '../deploy/fixtures.js';
import { call as callVia } from './call.js';

/*
 * Array-element updates that change nothing, the array form of a map, and the content clusters a deployed
 * services.xml names, over loopback against the whole simulator, with the service's messages.
 */

let sim: Simulator;
let pool: Pool;
const call = (method: string, path: string, body?: unknown) => callVia(pool, method, path, body);

const songSchema = `schema song {
    document song {
        field title type string {
            indexing: summary
        }
        field tags type array<string> {
            indexing: summary
        }
        field ratings type map<string,int> {
            indexing: summary
        }
    }
}
`;
const artistSchema =
  'schema artist {\n    document artist {\n        field name type string {\n            indexing: summary\n        }\n    }\n}\n';
const bookSchema =
  'schema book {\n    document book {\n        field title type string {\n            indexing: summary\n        }\n    }\n}\n';

/** Two content clusters, neither called `content`: `music` holds songs and (global) artists, `books` books. */
function twoClusterPackage(): Record<string, string> {
  return {
    'services.xml': `<?xml version="1.0" encoding="utf-8" ?>
<services version="1.0">
  <container id="default" version="1.0">
    <document-api/>
  </container>
  <content id="music" version="1.0">
    <documents>
      <document type="song" mode="index"/>
      <document type="artist" mode="index" global="true"/>
    </documents>
  </content>
  <content id="books" version="1.0">
    <documents>
      <document type="book" mode="index"/>
    </documents>
  </content>
</services>
`,
    'schemas/song.sd': songSchema,
    'schemas/artist.sd': artistSchema,
    'schemas/book.sd': bookSchema,
  };
}

const deploy = (files: Record<string, string>): Promise<any> => deployPackage(sim.configUrl!, files);

async function undeploy(): Promise<void> {
  const res = await rawRequest(sim.configUrl!, 'DELETE', appPath);
  expect(res.status, res.text).toBe(200);
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, configPort: 0 });
  pool = new Pool(sim.url, { connections: 2 });
});
afterAll(async () => {
  await pool.close();
  await sim.close();
});

const song = '/document/v1/ns/song/docid/a';
const songId = 'id:ns:song::a';

describe('array elements that are not there', () => {
  beforeEach(async () => {
    await deploy(twoClusterPackage());
    sim.documents.store.clear();
  });

  it('assigning past the end of an array, by field path or by match, is ignored with 200', async () => {
    expect((await call('POST', song, { fields: { title: 't', tags: ['x', 'y'] } })).status).toBe(200);
    for (const fields of [{ 'tags[7]': { assign: 'z' } }, { tags: { match: { element: 7, assign: 'z' } } }]) {
      const r = await call('PUT', song, { fields });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ pathId: song, id: songId });
    }
    expect((await call('GET', song)).json.fields).toEqual({ title: 't', tags: ['x', 'y'] });
  });

  it('assigning an element of a missing array creates nothing', async () => {
    expect((await call('POST', song, { fields: { title: 't' } })).status).toBe(200);
    for (const fields of [{ 'tags[0]': { assign: 'z' } }, { tags: { match: { element: 0, assign: 'z' } } }]) {
      const r = await call('PUT', song, { fields });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ pathId: song, id: songId });
    }
    expect((await call('GET', song)).json.fields).toEqual({ title: 't' });
  });

  it('an element inside the array is assigned, by either form', async () => {
    expect((await call('POST', song, { fields: { tags: ['x', 'y'] } })).status).toBe(200);
    expect((await call('PUT', song, { fields: { 'tags[1]': { assign: 'z' } } })).status).toBe(200);
    expect((await call('PUT', song, { fields: { tags: { match: { element: 0, assign: 'w' } } } })).status).toBe(200);
    expect((await call('GET', song)).json.fields).toEqual({ tags: ['w', 'z'] });
  });
});

describe('the array form of a map', () => {
  beforeEach(async () => {
    await deploy(twoClusterPackage());
    sim.documents.store.clear();
  });

  const prefix = `In document '${songId}': Could not parse field 'ratings' of type Map<string,int>: `;
  const refusedPuts: [string, unknown, number, string][] = [
    ['a string entry', ['x'], 400, `${prefix}Expected start of JSON object, got VALUE_STRING`],
    ['an array entry', [[1]], 400, `${prefix}Expected start of JSON object, got START_ARRAY`],
    [
      'a third member',
      [{ key: 'a', value: 1, extra: 'b' }],
      400,
      `${prefix}Expected end of JSON object, got VALUE_STRING`,
    ],
    [
      'a third member holding an object',
      [{ value: 1, key: 'a', extra: {} }],
      400,
      `${prefix}Expected end of JSON object, got START_OBJECT`,
    ],
    ['no value', [{ key: 'a' }], 500, 'Missing key or value for map entry.'],
    ['no key', [{ value: 1 }], 500, 'Missing key or value for map entry.'],
    ['another member first', [{ extra: 1, key: 'a', value: 1 }], 500, 'Missing key or value for map entry.'],
    ['a second member that is neither', [{ key: 'a', other: 1 }], 500, 'Missing key or value for map entry.'],
    ['a bad value', [{ key: 'a', value: 'x' }], 400, `${prefix}For input string: "x"`],
  ];
  it.each(refusedPuts)(
    'a put with %s is refused with the reader message and status',
    async (_what, ratings, status, message) => {
      const r = await call('POST', song, { fields: { ratings } });
      expect(r.status, r.text).toBe(status);
      expect(r.json).toEqual({ pathId: song, message });
      expect(sim.documents.store.size()).toBe(0);
    },
  );

  const refusedAssigns: [string, unknown, number, string][] = [
    ['a number entry', [1], 400, "Error in 'ratings': Expected start of JSON object, got VALUE_NUMBER_INT"],
    [
      'a third member',
      [{ key: 'a', value: 1, extra: true }],
      400,
      "Error in 'ratings': Expected end of JSON object, got VALUE_TRUE",
    ],
    ['no value', [{ key: 'a' }], 500, 'Missing key or value for map entry.'],
  ];
  it.each(refusedAssigns)(
    'an assign with %s is refused with the reader message and status',
    async (_what, ratings, status, message) => {
      expect((await call('POST', song, { fields: { title: 't' } })).status).toBe(200);
      const r = await call('PUT', song, { fields: { ratings: { assign: ratings } } });
      expect(r.status, r.text).toBe(status);
      expect(r.json).toEqual({ pathId: song, message });
      expect((await call('GET', song)).json.fields).toEqual({ title: 't' });
    },
  );

  it('takes key and value in either order, in a put and an assign', async () => {
    expect((await call('POST', song, { fields: { ratings: [{ key: 'a', value: 1 }] } })).status).toBe(200);
    const r = await call('PUT', song, { fields: { ratings: { assign: [{ value: 2, key: 'b' }] } } });
    expect(r.status, r.text).toBe(200);
  });
});

describe('content clusters from services.xml', () => {
  it('before a deployment the clusters are the configured ones', async () => {
    await undeployIfAny();
    const r = await call('GET', '/document/v1/ns/song/docid?cluster=music');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      pathId: '/document/v1/ns/song/docid',
      message: "Your Vespa deployment has no content cluster 'music', only 'content'",
    });
    expect((await call('POST', `${song}?cluster=content`, { fields: { title: 't' } })).status).toBe(200);
  });

  it('after a deployment they are the package content cluster ids, with no prepare warning about them', async () => {
    const deployed = await deploy(twoClusterPackage());
    expect(deployed.log.filter((l: { level: string }) => l.level === 'WARNING')).toEqual([]);
    sim.documents.store.clear();

    const put = await call('POST', `${song}?cluster=music`, { fields: { title: 't' } });
    expect(put.status, put.text).toBe(200);
    const visit = await call('GET', '/document/v1/ns/song/docid?cluster=music');
    expect(visit.status, visit.text).toBe(200);
    expect(visit.json.documents).toEqual([{ id: songId, fields: { title: 't' } }]);

    const content = await call('GET', '/document/v1/ns/song/docid?cluster=content');
    expect(content.status).toBe(400);
    expect(content.json).toEqual({
      pathId: '/document/v1/ns/song/docid',
      message: "Your Vespa deployment has no content cluster 'content', only 'music', 'books'",
    });
    const putContent = await call('POST', `${song}?cluster=content`, { fields: { title: 't' } });
    expect(putContent.status).toBe(400);
    expect(putContent.json).toEqual({
      pathId: song,
      message: "Your Vespa deployment has no content cluster 'content', only 'music', 'books'",
    });
  });

  it('a document type is served only by the clusters that list it', async () => {
    await deploy(twoClusterPackage());
    sim.documents.store.clear();
    const r = await call('GET', '/document/v1/ns/song/docid?cluster=books');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      pathId: '/document/v1/ns/song/docid',
      message: "There is no document type 'song' in cluster 'books', only 'book'",
    });
    const unnamed = await call('GET', '/document/v1/ns/song/docid');
    expect(unnamed.status).toBe(400);
    expect(unnamed.json.message).toBe(
      "Please specify one of the content clusters in your Vespa deployment: 'music', 'books'",
    );

    // Without 'cluster' a document goes to the cluster that holds its type.
    expect((await call('POST', song, { fields: { title: 't' } })).status).toBe(200);
    expect((await call('POST', '/document/v1/ns/book/docid/b', { fields: { title: 'b' } })).status).toBe(200);
    expect(sim.documents.store.all('music').map((d) => d.id)).toEqual([songId]);
    expect(sim.documents.store.all('books').map((d) => d.id)).toEqual(['id:ns:book::b']);
    expect((await call('GET', song)).status).toBe(200);
  });

  it('global document types follow the package', async () => {
    await deploy(twoClusterPackage());
    sim.documents.store.clear();
    expect((await call('POST', song, { fields: { title: 't' } })).status).toBe(200);
    expect((await call('POST', '/document/v1/ns/artist/docid/x', { fields: { name: 'n' } })).status).toBe(200);
    const ids = async (path: string): Promise<string[]> => {
      const r = await call('GET', path);
      expect(r.status, r.text).toBe(200);
      return (r.json.documents as { id: string }[]).map((d) => d.id);
    };
    expect(await ids('/document/v1/?cluster=music&bucketSpace=global')).toEqual(['id:ns:artist::x']);
    expect(await ids('/document/v1/?cluster=music&bucketSpace=default')).toEqual([songId]);
    expect(await ids('/document/v1/ns/artist/docid?cluster=music')).toEqual(['id:ns:artist::x']);
  });

  it('deleting the application goes back to the configured clusters', async () => {
    await deploy(twoClusterPackage());
    await undeploy();
    expect((await call('GET', '/document/v1/ns/song/docid?cluster=content')).status).toBe(200);
    const r = await call('GET', '/document/v1/ns/song/docid?cluster=music');
    expect(r.json.message).toBe("Your Vespa deployment has no content cluster 'music', only 'content'");
  });
});

/** The application may be live from an earlier test: deleting it returns the simulator to its start. */
async function undeployIfAny(): Promise<void> {
  const res = await rawRequest(sim.configUrl!, 'DELETE', appPath);
  expect([200, 404]).toContain(res.status);
}
