import { Readable } from 'node:stream';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { feed, visit, type OperationResult, type VisitedPut, type VisitedRemove } from '../../src/index.js';
import { useFeedFixtures } from './helpers.js';

// What a user of the library meets under strict TypeScript (issue 41, point 10). The type checks are compile-time:
// `npm test` type-checks this file, and an @ts-expect-error that stops being an error fails that check.
describe('the library as a strict TypeScript user writes against it', () => {
  const { server } = useFeedFixtures();

  it('types a misspelt operation key as an error, and the visited documents without tombstones as having fields', () => {
    const never = async (): Promise<void> => {
      // @ts-expect-error: 'pt' is no operation key (put, id, update, remove)
      await feed([{ pt: 'id:ns:music::1', fields: {} }], { endpoint: 'http://127.0.0.1:1' });
      // @ts-expect-error: an update needs its fields
      await feed([{ update: 'id:ns:music::1' }], { endpoint: 'http://127.0.0.1:1' });
      await feed([{ put: 'id:ns:music::1', fields: { title: 't' } }, { remove: 'id:ns:music::2' }], {
        endpoint: 'http://127.0.0.1:1',
      });
      for await (const doc of visit({ endpoint: 'http://127.0.0.1:1' })) {
        expectTypeOf(doc).toEqualTypeOf<VisitedPut>();
        expectTypeOf(doc.fields).toEqualTypeOf<Record<string, unknown>>();
      }
      for await (const doc of visit({ endpoint: 'http://127.0.0.1:1', includeRemoves: true })) {
        expectTypeOf(doc).toEqualTypeOf<VisitedPut | VisitedRemove>();
        if (doc.kind === 'put') expectTypeOf(doc.fields).toEqualTypeOf<Record<string, unknown>>();
        else expectTypeOf(doc.fields).toEqualTypeOf<undefined>();
      }
    };
    expect(typeof never).toBe('function');
  });

  it('a visited document has its fields, and a tombstone has none, at run time as typed', async () => {
    const s = await server();
    await feed(
      [
        { put: 'id:ns:music::a', fields: { title: 'x' } },
        { put: 'id:ns:music::b', fields: {} },
      ],
      {
        endpoint: s.url,
        failures: false,
      },
    );
    await feed([{ remove: 'id:ns:music::b' }], { endpoint: s.url, failures: false });
    const seen: string[] = [];
    for await (const doc of visit({ endpoint: s.url, namespace: 'ns', documentType: 'music', includeRemoves: true }))
      seen.push(doc.kind === 'put' ? `${doc.id} ${JSON.stringify(doc.fields)}` : `${doc.id} removed ${doc.fields}`);
    expect(seen.sort()).toEqual(['id:ns:music::a {"title":"x"}', 'id:ns:music::b removed undefined']);
  });

  it('onResult names the id, kind, place and code of an operation that could not be read, where its bytes show them', async () => {
    const s = await server();
    const results: OperationResult[] = [];
    const lines = [
      '{"put":"id:ns:music::good","fields":{"title":"t"}}',
      '{"put":"id:ns:music::cut","fields":{"title":',
      '{"update":"id:ns:music::\\u0071","fields":{"year":{"assign":1}},}',
      'not json at all',
    ];
    const summary = await feed(Readable.from([`${lines.join('\n')}\n`]), {
      endpoint: s.url,
      failures: false,
      onResult: (r) => results.push(r),
    });
    expect(summary.ok).toBe(1);
    expect(summary.errors).toBe(3);
    const failed = results.filter((r) => !r.ok).sort((a, b) => a.line - b.line);
    expect(failed.map((r) => [r.line, r.id, r.kind, r.code])).toEqual([
      [2, 'id:ns:music::cut', 'put', 'VB_BAD_JSON'],
      [3, 'id:ns:music::q', 'update', 'VB_BAD_JSON'],
      [4, undefined, undefined, 'VB_BAD_JSON'],
    ]);
    expect(failed.every((r) => r.input === '<stream>' && r.attempts === 0 && r.message !== undefined)).toBe(true);
  });
});
