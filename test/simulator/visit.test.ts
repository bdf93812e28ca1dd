import { describe, expect, it } from 'vitest';
import { idParts } from '../../src/simulator/document-api/document-store.js';
import { useDocumentServer } from './document-server-fixture.js';

const sim = useDocumentServer({ clusters: ['content', 'backup'], visitChunkDocuments: 7 });

const { call } = sim;

const q = encodeURIComponent;

/** Follows continuations of plain visits to the end; returns ids in visit order and the number of requests. */
async function visitAll(path: string): Promise<{ ids: string[]; requests: number }> {
  const ids: string[] = [];
  let continuation: string | undefined;
  let requests = 0;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await call('GET', continuation === undefined ? path : `${path}${sep}continuation=${q(continuation)}`);
    expect(r.status, r.text).toBe(200);
    requests++;
    expect(r.json.documentCount).toBe(r.json.documents.length);
    for (const d of r.json.documents) ids.push(d.id ?? `remove:${d.remove}`);
    continuation = r.json.continuation;
  } while (continuation !== undefined && requests < 1000);
  return { ids, requests };
}

function seed(count: number, cluster?: string): void {
  sim.server.store.seed(
    Array.from({ length: count }, (_, i) => ({
      id: `id:ns:music::doc${i}`,
      fields: { i, even: i % 2 === 0, title: `t${i}` },
    })),
    { cluster },
  );
}

describe('plain visits', () => {
  it('pages through the corpus with continuations, each document once', async () => {
    seed(50);
    const first = await call('GET', '/document/v1/ns/music/docid?cluster=content');
    expect(first.status).toBe(200);
    expect(Object.keys(first.json)).toEqual(['pathId', 'documents', 'documentCount', 'continuation']);
    expect(first.json.pathId).toBe('/document/v1/ns/music/docid');
    expect(first.json.documents).toHaveLength(7);
    expect(first.json.documents[0]).toEqual({
      id: expect.stringMatching(/^id:ns:music::doc\d+$/),
      fields: expect.any(Object),
    });

    const { ids, requests } = await visitAll('/document/v1/ns/music/docid/?cluster=content');
    expect(requests).toBe(8);
    expect(new Set(ids).size).toBe(50);
    expect(ids).toHaveLength(50);
  });

  it('honours wantedDocumentCount and ends without a continuation', async () => {
    seed(5);
    const r = await call('GET', '/document/v1/ns/music/docid/?cluster=content&wantedDocumentCount=100');
    expect(r.json.documentCount).toBe(5);
    expect(r.json.continuation).toBeUndefined();
    expect((await call('GET', '/document/v1/ns/music/docid/?cluster=content&wantedDocumentCount=0')).status).toBe(400);
  });

  it('ANDs the selection with the path type, namespace and group', async () => {
    seed(20);
    sim.server.store.put('id:other:music::x', { i: 1000, even: true });
    sim.server.store.put('id:ns:book::y', { i: 1001, even: true });
    sim.server.store.put('id:ns:music:g=g1:z', { i: 1002, even: true });
    const { ids } = await visitAll(`/document/v1/ns/music/docid/?cluster=content&selection=${q('music.even == true')}`);
    expect(ids).toHaveLength(11);
    expect(ids).toContain('id:ns:music:g=g1:z');
    expect(ids).not.toContain('id:other:music::x');
    expect(ids).not.toContain('id:ns:book::y');
    const group = await visitAll('/document/v1/ns/music/group/g1/?cluster=content');
    expect(group.ids).toEqual(['id:ns:music:g=g1:z']);
  });

  it('visits everything at the root with a cluster', async () => {
    seed(3);
    sim.server.store.put('id:ns:book::y', { a: 1 });
    const { ids } = await visitAll('/document/v1/?cluster=content&wantedDocumentCount=100');
    expect(ids.sort()).toEqual(['id:ns:book::y', 'id:ns:music::doc0', 'id:ns:music::doc1', 'id:ns:music::doc2']);
  });

  it('applies field sets', async () => {
    seed(2);
    const ids = await call(
      'GET',
      `/document/v1/ns/music/docid/?cluster=content&fieldSet=${q('[id]')}&wantedDocumentCount=10`,
    );
    expect(ids.json.documents.every((d: any) => Object.keys(d.fields).length === 0)).toBe(true);
    const some = await call(
      'GET',
      `/document/v1/ns/music/docid/?cluster=content&fieldSet=${q('music:i,title')}&wantedDocumentCount=10`,
    );
    expect(Object.keys(some.json.documents[0].fields).sort()).toEqual(['i', 'title']);
    expect((await call('GET', `/document/v1/ns/music/docid/?cluster=content&fieldSet=${q('[wat]')}`)).status).toBe(400);
  });

  it('splits the corpus into disjoint slices that cover it', async () => {
    seed(60);
    const all = new Set<string>();
    let total = 0;
    for (let slice = 0; slice < 3; slice++) {
      const { ids } = await visitAll(`/document/v1/ns/music/docid/?cluster=content&slices=3&sliceId=${slice}`);
      expect(ids.length).toBeGreaterThan(0);
      total += ids.length;
      for (const id of ids) all.add(id);
    }
    expect(total).toBe(60);
    expect(all.size).toBe(60);
  });

  it("iterates only the request's slice and bucket space, as a content node does", async () => {
    seed(60);
    for (let i = 0; i < 5; i++) sim.server.store.put(`id:ns:music:g=g1:${i}`, { i });
    /** The entries the content nodes walked through for one streamed request, and the documents it sent. */
    const walked = async (path: string): Promise<{ iterated: number; documents: number }> => {
      const before = sim.server.stats().visits.iterated;
      const r = await call('GET', `${path}&stream=true`, undefined, { accept: 'application/jsonl' });
      expect(r.status, r.text).toBe(200);
      const documents = r.text.split('\n').filter((l) => l.startsWith('{"put"')).length;
      return { iterated: sim.server.stats().visits.iterated - before, documents };
    };
    const all = sim.server.store.all();
    const inSlice = all.filter((d) => idParts(d.id).bucket % 3 === 1).length;
    expect(inSlice).toBeGreaterThan(0);
    expect(inSlice).toBeLessThan(all.length);
    expect(await walked('/document/v1/ns/music/docid/?cluster=content&slices=3&sliceId=1')).toEqual({
      iterated: inSlice,
      documents: inSlice,
    });
    // What does not match is walked through all the same.
    expect(
      await walked(`/document/v1/ns/music/docid/?cluster=content&slices=3&sliceId=1&selection=${q('music.i > 9999')}`),
    ).toEqual({ iterated: inSlice, documents: 0 });
    expect(await walked('/document/v1/ns/music/docid/?cluster=content')).toEqual({
      iterated: all.length,
      documents: all.length,
    });
    expect(await walked('/document/v1/?cluster=content&bucketSpace=global')).toEqual({ iterated: 0, documents: 0 });
    expect(await walked('/document/v1/ns/music/group/g1/?cluster=content')).toEqual({ iterated: 5, documents: 5 });
  });

  it('reports tombstones with includeRemoves and filters by timestamp', async () => {
    seed(4);
    const before = sim.server.store.get('id:ns:music::doc3')!.timestampMicros;
    await call('DELETE', '/document/v1/ns/music/docid/doc0');
    const r = await call(
      'GET',
      '/document/v1/ns/music/docid/?cluster=content&includeRemoves=true&wantedDocumentCount=100',
    );
    expect(r.json.documents).toContainEqual({ remove: 'id:ns:music::doc0' });
    expect(r.json.documentCount).toBe(4);
    const recent = await call(
      'GET',
      `/document/v1/ns/music/docid/?cluster=content&includeRemoves=true&wantedDocumentCount=100&fromTimestamp=${before + 1}`,
    );
    expect(recent.json.documents).toEqual([{ remove: 'id:ns:music::doc0' }]);
    const old = await call(
      'GET',
      `/document/v1/ns/music/docid/?cluster=content&wantedDocumentCount=100&toTimestamp=${before}`,
    );
    expect(old.json.documentCount).toBe(3);
  });

  it('separates the default and global bucket spaces at the root', async () => {
    seed(2);
    expect(
      (await call('GET', '/document/v1/?cluster=content&bucketSpace=default&wantedDocumentCount=10')).json
        .documentCount,
    ).toBe(2);
    expect(
      (await call('GET', '/document/v1/?cluster=content&bucketSpace=global&wantedDocumentCount=10')).json.documentCount,
    ).toBe(0);
    const bad = await call('GET', '/document/v1/?cluster=content&bucketSpace=other');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("Bucket space 'other'");
  });
});

describe('visit parameter errors', () => {
  const base = '/document/v1/ns/music/docid/?cluster=content';
  const cases: Array<[string, string | RegExp]> = [
    [`${base}&slices=3`, "None or both of 'slices' and 'sliceId' must be set"],
    [`${base}&sliceId=0`, "None or both of 'slices' and 'sliceId' must be set"],
    [`${base}&slices=3&sliceId=3`, /sliceId/],
    [`${base}&fromTimestamp=10&toTimestamp=5`, /toTimestamp/],
    [`${base}&dryRun=true`, /dryRun/],
    [`${base}&selection=${q('music.i ==')}`, /position \d+/],
    [`${base}&continuation=bogus`, /^Failed parsing 'bogus': /],
    [`${base}&concurrency=0`, 'concurrency must be positive'],
    [
      '/document/v1/',
      "Must set 'cluster' parameter to a valid content cluster id when visiting at a root /document/v1/ level",
    ],
    ['/document/v1/?cluster=*', "Your Vespa deployment has no content cluster '*', only 'content', 'backup'"],
    [
      '/document/v1/ns/music/docid/',
      "Please specify one of the content clusters in your Vespa deployment: 'content', 'backup'",
    ],
  ];
  for (const [path, message] of cases) {
    it(`400 for ${path}`, async () => {
      const r = await call('GET', path);
      expect(r.status).toBe(400);
      expect(Object.keys(r.json)).toEqual(['pathId', 'message']);
      if (typeof message === 'string') expect(r.json.message).toBe(message);
      else expect(r.json.message).toMatch(message);
      // Still serving.
      expect((await call('GET', `${base}&wantedDocumentCount=1`)).status).toBe(200);
    });
  }

  it('400 for an unparseable Accept on a stream', async () => {
    const r = await call('GET', `${base}&stream=true`, undefined, { accept: 'application/jsonl;q=lots' });
    expect(r.status).toBe(400);
  });
});

describe('streamed visits', () => {
  it('streams JSONL with progress lines and the trailer', async () => {
    seed(20);
    const r = await call('GET', '/document/v1/ns/music/docid/?cluster=content&stream=true', undefined, {
      accept: 'application/jsonl',
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/jsonl; charset=UTF-8');
    const lines = r.text.trimEnd().split('\n');
    const objects = lines.map((l) => JSON.parse(l));
    const puts = objects.filter((o) => 'put' in o);
    expect(puts).toHaveLength(20);
    expect(puts[0]).toEqual({ put: expect.stringMatching(/^id:ns:music::doc/), fields: expect.any(Object) });
    const progress = objects.filter((o) => 'continuation' in o);
    expect(progress.length).toBe(3); // after 7 and 14 documents, then the final line
    expect(progress[0].continuation).toEqual({ token: expect.any(String), percentFinished: expect.any(Number) });
    expect(lines.at(-2)).toBe('{"sessionStats":{"documentCount":20}}');
    expect(lines.at(-1)).toBe('{"continuation":{"percentFinished":100.0}}');
  });

  it('resumes from a progress token without losing documents', async () => {
    seed(30);
    const path = '/document/v1/ns/music/docid/?cluster=content&stream=true';
    const full = await call('GET', path, undefined, { accept: 'application/jsonl' });
    const objects = full.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const firstToken = objects.find((o) => o.continuation?.token)!.continuation.token;
    const seenBefore = objects
      .slice(
        0,
        objects.findIndex((o) => o.continuation?.token),
      )
      .map((o) => o.put);
    const rest = await call('GET', `${path}&continuation=${q(firstToken)}`, undefined, { accept: 'application/jsonl' });
    const after = rest.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((o) => o.put)
      .map((o) => o.put);
    expect(new Set([...seenBefore, ...after]).size).toBe(30);
    expect(seenBefore.length + after.length).toBe(30);
  });

  it('stops at wantedDocumentCount with a token in the final continuation', async () => {
    seed(20);
    const r = await call(
      'GET',
      '/document/v1/ns/music/docid/?cluster=content&stream=true&wantedDocumentCount=10',
      undefined,
      {
        accept: 'application/jsonl',
      },
    );
    const lines = r.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((o) => o.put)).toHaveLength(10);
    expect(lines.at(-1).continuation.token).toEqual(expect.any(String));
  });

  it('streams the plain JSON object without a JSONL Accept', async () => {
    seed(12);
    const r = await call('GET', '/document/v1/ns/music/docid/?cluster=content&stream=true', undefined, {
      accept: 'application/json',
    });
    expect(r.headers['content-type']).toBe('application/json; charset=UTF-8');
    expect(r.json.documentCount).toBe(12);
    expect(r.json.documents).toHaveLength(12);
    expect(r.json.continuation).toBeUndefined();
  });

  it('keeps memory bounded for a slow reader (backpressure) and still delivers everything', async () => {
    sim.server.store.seed(
      Array.from({ length: 3000 }, (_, i) => ({ id: `id:ns:music::big${i}`, fields: { blob: 'b'.repeat(1000), i } })),
    );
    const res = await sim.pool.request({
      method: 'GET',
      path: '/document/v1/ns/music/docid/?cluster=content&stream=true',
      headers: { accept: 'application/jsonl' },
    });
    let puts = 0;
    let text = '';
    for await (const chunk of res.body) {
      text += chunk.toString();
      const cut = text.lastIndexOf('\n');
      // A chunk without a newline ends no line; counting text.slice(0, -1) would count a partial line twice.
      if (cut >= 0) {
        for (const line of text.slice(0, cut).split('\n')) if (line.startsWith('{"put"')) puts++;
        text = text.slice(cut + 1);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(puts).toBe(3000);
  });
});

describe('bulk operations', () => {
  it('refuses update-where without a selection', async () => {
    seed(3);
    const r = await call('PUT', '/document/v1/ns/music/docid/?cluster=content', { fields: { title: { assign: 'x' } } });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe("Must specify 'selection' at '/document/v1/ns/music/docid/'");
    expect(sim.server.store.get('content', 'id:ns:music::doc0')?.fields.title).toBe('t0');
  });

  it('updates where the selection matches, chunk by chunk', async () => {
    seed(20);
    let continuation: string | undefined;
    let total = 0;
    let requests = 0;
    do {
      const path = `/document/v1/ns/music/docid/?cluster=content&selection=${q('music.even == true')}${continuation ? `&continuation=${q(continuation)}` : ''}`;
      const r = await call('PUT', path, { fields: { title: { assign: 'even' } } });
      expect(r.status).toBe(200);
      expect(Object.keys(r.json).slice(0, 2)).toEqual(['pathId', 'documentCount']);
      total += r.json.documentCount;
      continuation = r.json.continuation;
      requests++;
    } while (continuation !== undefined);
    expect(total).toBe(10);
    expect(requests).toBeGreaterThan(1);
    for (const d of sim.server.store.all('content'))
      expect(d.fields.title).toBe((d.fields.i as number) % 2 === 0 ? 'even' : `t${d.fields.i as number}`);
  });

  it('deletes where the selection matches', async () => {
    seed(20);
    let continuation: string | undefined;
    do {
      const r = await call(
        'DELETE',
        `/document/v1/ns/music/docid/?cluster=content&selection=${q('music.i < 5')}${continuation ? `&continuation=${q(continuation)}` : ''}`,
      );
      expect(r.status).toBe(200);
      continuation = r.json.continuation;
    } while (continuation !== undefined);
    expect(sim.server.store.size('content')).toBe(15);
  });

  it('copies to the destination cluster', async () => {
    seed(10);
    let continuation: string | undefined;
    let copied = 0;
    do {
      const r = await call(
        'POST',
        `/document/v1/ns/music/docid/?cluster=content&destinationCluster=backup&selection=true${continuation ? `&continuation=${q(continuation)}` : ''}`,
      );
      expect(r.status).toBe(200);
      copied += r.json.documentCount;
      continuation = r.json.continuation;
    } while (continuation !== undefined);
    expect(copied).toBe(10);
    expect(sim.server.store.size('backup')).toBe(10);
    expect(sim.server.store.get('backup', 'id:ns:music::doc3')?.fields).toEqual({ i: 3, even: false, title: 't3' });
    const noDest = await call('POST', '/document/v1/ns/music/docid/?cluster=content&selection=true');
    expect(noDest.status).toBe(400);
    expect(noDest.json.message).toContain("'destinationCluster'");
  });

  it('refuses parameters that do not apply to bulk operations', async () => {
    for (const p of ['concurrency=2', 'fieldSet=%5Ball%5D', 'route=x', 'wantedDocumentCount=3']) {
      const r = await call('DELETE', `/document/v1/ns/music/docid/?cluster=content&selection=true&${p}`);
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(/^May not specify '/);
    }
  });
});
