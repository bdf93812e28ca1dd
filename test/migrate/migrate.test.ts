import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { migrate } from '../../src/migrate/migrate.js';

describe('migrate', () => {
  const servers: DocumentServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  async function server(): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, visitChunkDocuments: 50 });
    servers.push(s);
    return s;
  }
  const songs = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      id: `id:ns:music::${i}`,
      fields: { title: `song ${i}`, year: 1990 + (i % 30), n: i },
    }));

  it('--to migration leaves the two stores equal', async () => {
    const a = await server();
    const b = await server();
    a.store.seed(songs(500));
    const summary = await migrate({
      endpoint: a.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 3,
      destination: b.url,
      feed: { failures: false },
    });
    expect(summary.ok).toBe(true);
    const strip = (docs: Array<{ id: string; fields: Record<string, unknown> }>) =>
      docs.map((d) => ({ id: d.id, fields: d.fields })).sort((x, y) => x.id.localeCompare(y.id));
    expect(strip(b.store.all())).toEqual(strip(a.store.all()));
  });

  it('refuses verify with a part of the source or with a transform, before anything is moved', async () => {
    const a = await server();
    const b = await server();
    a.store.seed(songs(10));
    // A part of the source cannot be checked against the whole destination.
    await expect(migrate({ endpoint: a.url, destination: b.url, verify: true, fromTimestamp: '1' })).rejects.toThrow(
      /fromTimestamp must be left out with verify/,
    );
    await expect(
      migrate({ endpoint: a.url, destination: b.url, verify: true, feed: { transform: (op) => op } }),
    ).rejects.toThrow(/verify must be left out with a transform/);
    expect(b.store.size()).toBe(0);
  });
});
