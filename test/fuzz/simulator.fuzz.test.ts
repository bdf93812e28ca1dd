import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { toDocumentPath } from '../../src/document/id.js';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { method, rawPath, selectionText, writableDocumentId } from './arbitraries.js';

let server: DocumentServer;
let pool: Pool;

beforeAll(async () => {
  server = await startDocumentServer({ port: 0 });
  pool = new Pool(server.url, { connections: 2, headersTimeout: 10_000, bodyTimeout: 10_000 });
});
afterAll(async () => {
  await pool.close();
  await server.close();
});

async function send(
  methodName: string,
  path: string,
  body?: string,
): Promise<{ status: number; text: string; json: any }> {
  const res = await pool.request({
    method: methodName,
    path,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, text, json };
}

describe('ids with odd characters against the simulator (property, loopback)', () => {
  it('round-trip through put, get and visit', async () => {
    const written = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(writableDocumentId, async (id) => {
        const path = toDocumentPath(id);
        const put = await send('POST', path, JSON.stringify({ fields: { title: id } }));
        expect(put.status, put.text).toBe(200);
        expect(put.json).toMatchObject({ id });
        const got = await send('GET', path);
        expect(got.status, got.text).toBe(200);
        expect(got.json).toMatchObject({ id, fields: { title: id } });
        written.set(id, id);
      }),
      { numRuns: 150 },
    );
    // Every id comes back from a visit of everything, exactly as written.
    const seen = new Set<string>();
    let continuation: string | undefined;
    for (let page = 0; page < 50; page++) {
      const q = `cluster=content&wantedDocumentCount=1000${continuation ? `&continuation=${encodeURIComponent(continuation)}` : ''}`;
      const visit = await send('GET', `/document/v1/?${q}`);
      expect(visit.status, visit.text).toBe(200);
      for (const doc of visit.json.documents as Array<{ id: string; fields: { title: string } }>) {
        expect(doc.fields.title).toBe(doc.id);
        seen.add(doc.id);
      }
      continuation = visit.json.continuation;
      if (continuation === undefined) break;
    }
    expect([...written.keys()].filter((id) => !seen.has(id))).toEqual([]);
  });
});

describe('simulator path parser (property, loopback)', () => {
  it('answers random paths and methods with a JSON error, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(method, rawPath, async (m, path) => {
        const body = m === 'POST' || m === 'PUT' ? '{"fields":{}}' : undefined;
        const r = await send(m, path, body);
        expect(r.status, `${m} ${path}: ${r.text}`).toBeLessThan(500);
        if (r.status >= 400) {
          // 412: a random `condition` the document does not meet (or a missing document), as the service answers.
          expect([400, 404, 405, 412, 413]).toContain(r.status);
          // Errors carry a message; a get of a missing document is 404 with the id instead, as in the service.
          if (m !== 'HEAD') {
            expect(r.json, `${m} ${path}: ${r.text}`).toMatchObject({ pathId: expect.any(String) });
            expect(
              typeof r.json.message === 'string' || (r.status === 404 && typeof r.json.id === 'string'),
              `${m} ${path}: ${r.text}`,
            ).toBe(true);
          }
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe('visit selections (property, loopback)', () => {
  it('answer 200, or 400 naming the position of a syntax error, never 500', async () => {
    await send(
      'POST',
      '/document/v1/ns/music/docid/s1',
      JSON.stringify({ fields: { title: 'x', year: 2001, tags: { k: 1 } } }),
    );
    await fc.assert(
      fc.asyncProperty(selectionText, async (selection) => {
        const r = await send(
          'GET',
          `/document/v1/ns/music/docid/?selection=${encodeURIComponent(selection)}&wantedDocumentCount=10`,
        );
        expect([200, 400], `${JSON.stringify(selection)}: ${r.text}`).toContain(r.status);
        if (r.status === 400) {
          // A syntax error names its position; the other refusal is an empty parameter.
          const message = r.json.message as string;
          if (/Failed parsing/.test(message)) expect(message, JSON.stringify(selection)).toMatch(/position \d+/);
          else expect(message, JSON.stringify(selection)).toMatch(/'selection'/);
        }
      }),
      { numRuns: 800 },
    );
  });
});
