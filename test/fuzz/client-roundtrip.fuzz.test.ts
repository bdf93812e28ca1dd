import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { type OperationResult } from '../../src/feed/operation-result.js';
import { DocumentClient } from '../../src/http/document-client.js';
import { visit } from '../../src/visit/visit.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { writableDocumentId } from './arbitraries.js';

/**
 * The same odd ids as simulator.fuzz.test.ts (`:`, `/`, `+`, `%`, spaces, unicode, tab/LF/CR), but through
 * vespa-bulk's own clients: the feeder writes them, DocumentClient reads each back, and a sliced streamed
 * visit returns every one of them exactly as written. A bug in any client's path encoding shows up as a
 * document stored under another id, a 404 on get, or an id missing from (or mangled in) the visit.
 */
let server: DocumentServer;
let client: DocumentClient;

beforeAll(async () => {
  server = await startDocumentServer({ port: 0 });
  client = new DocumentClient({ endpoint: server.url, connections: 2 });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('odd ids through feed, get and visit (property, loopback)', () => {
  it('round-trip unchanged', async () => {
    const written = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(writableDocumentId, { minLength: 1, maxLength: 25 }), async (ids) => {
        const results: OperationResult[] = [];
        const summary = await feed(
          ids.map((id) => ({ put: id, fields: { title: id } })),
          { endpoint: server.url, failures: false, checkpoint: false, onResult: (r) => results.push(r) },
        );
        expect(results.filter((r) => !r.ok).map((r) => `${r.id}: ${r.status} ${r.message}`)).toEqual([]);
        expect(summary.ok).toBe(ids.length);
        for (const id of ids) {
          // The service stored it under exactly this id, not a decoded or re-encoded variant.
          expect(server.store.get(id)?.fields, JSON.stringify(id)).toEqual({ title: id });
          const got = await client.get(id);
          expect(got.status, `${JSON.stringify(id)}: ${JSON.stringify(got.body)}`).toBe(200);
          expect(got.body).toMatchObject({ id, fields: { title: id } });
          written.add(id);
        }
      }),
      { numRuns: 30 },
    );

    const seen = new Map<string, number>();
    for await (const doc of visit({ endpoint: server.url, cluster: 'content', slices: 3, stream: true })) {
      expect(doc.fields?.title, JSON.stringify(doc.id)).toBe(doc.id);
      seen.set(doc.id, (seen.get(doc.id) ?? 0) + 1);
    }
    expect([...written].filter((id) => seen.get(id) !== 1).map((id) => JSON.stringify(id))).toEqual([]);
    expect(seen.size).toBe(written.size);
  });
});
