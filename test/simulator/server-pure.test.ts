import { describe, expect, it } from 'vitest';
import { prefersJsonl } from '../../src/simulator/document-api/accept.js';
import { parseDocumentPath } from '../../src/simulator/document-api/document-path.js';
import { Faults, seededRandom, validateFaultPatch } from '../../src/simulator/faults.js';
import { parseFieldSet, projectFields } from '../../src/simulator/document-api/field-set.js';
import { QueryParameters } from '../../src/simulator/document-api/query-parameters.js';
import { parseJavaMilliseconds, parseUnsignedLong } from '../../src/simulator/document-api/java-parsers.js';
import { parseDurationMs } from '../../src/time/duration.js';
import { HandlerError } from '../../src/simulator/document-api/responses.js';
import {
  ClusterStore,
  decodeContinuation,
  encodeContinuation,
  idParts,
} from '../../src/simulator/document-api/document-store.js';
import { applyUpdate, parseFieldPath } from '../../src/simulator/document-api/update-ops.js';
import { bucketStretch, indexAfter, sliceOf } from '../../src/simulator/document-api/visit-index.js';

function status400(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HandlerError);
    expect((err as HandlerError).status).toBe(400);
    return (err as HandlerError).message;
  }
  throw new Error('expected a 400');
}

describe('document paths', () => {
  it('parses the three document forms, decoding each segment with + as space', () => {
    expect(parseDocumentPath('/document/v1/ns/music/docid/a%2Fb/c+d')).toEqual({
      kind: 'document',
      namespace: 'ns',
      type: 'music',
      location: undefined,
      id: 'id:ns:music::a/b/c d',
    });
    expect(parseDocumentPath('/document/v1/ns/music/number/12/x:y')).toMatchObject({ id: 'id:ns:music:n=12:x:y' });
    expect(parseDocumentPath('/document/v1/ns/music/group/g%20h/x')).toMatchObject({ id: 'id:ns:music:g=g h:x' });
    // A trailing slash names nothing more (the service's path parser drops trailing empty segments).
    expect(parseDocumentPath('/document/v1/ns/music/docid/a/')).toMatchObject({ id: 'id:ns:music::a' });
  });

  it('names collections and the root', () => {
    expect(parseDocumentPath('/document/v1/')).toEqual({ kind: 'root' });
    expect(parseDocumentPath('/document/v1')).toEqual({ kind: 'root' });
    expect(parseDocumentPath('/document/v1/ns/music/docid')).toMatchObject({ kind: 'collection', type: 'music' });
    expect(parseDocumentPath('/document/v1/ns/music/docid/')).toMatchObject({ kind: 'collection', type: 'music' });
    expect(parseDocumentPath('/document/v1/ns/music/group/g/')).toMatchObject({
      kind: 'collection',
      location: { kind: 'group', value: 'g' },
    });
    expect(parseDocumentPath('/document/v1/ns/music/number/7/')).toMatchObject({
      kind: 'collection',
      location: { kind: 'number', value: '7' },
    });
  });

  it('does not match other paths', () => {
    expect(parseDocumentPath('/document/v2/ns/music/docid/a')).toEqual({ kind: 'none' });
    expect(parseDocumentPath('/document/v1/ns/music/other/a')).toEqual({ kind: 'none' });
    expect(parseDocumentPath('/document/v1/ns')).toEqual({ kind: 'none' });
    expect(parseDocumentPath('/document/v1x')).toEqual({ kind: 'none' });
  });

  it('refuses empty, . and .. segments (also encoded), bad numbers and bad encodings', () => {
    const badSegment = (s: string) => `path segments cannot be "", ".", or "..", but got: '${s}'`;
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/docid/a//b'))).toBe(badSegment(''));
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/docid/..'))).toBe(badSegment('..'));
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/docid/%2E%2E'))).toBe(badSegment('..'));
    expect(status400(() => parseDocumentPath('/document/v1/ns/./docid/a'))).toBe(badSegment('.'));
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/number/abc/a'))).toBe(
      `Failed parsing 'abc': For input string: "abc"`,
    );
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/number/-12/a'))).toBe(
      "Failed parsing '-12': Illegal leading minus sign on unsigned string -12.",
    );
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/number/9223372036854775808/a'))).toBe(
      'For input string: "9223372036854775808"',
    );
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/docid/%zz'))).toContain('percent-encoding');
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/docid/a%01b'))).toContain('control character');
    expect(status400(() => parseDocumentPath('/document/v1/ns/music/group/a%01b/x'))).toBe(
      'Illegal code point U0001 in group',
    );
  });
});

describe('query parameters', () => {
  it('takes the last value, decodes + and %XX, and refuses empty values', () => {
    const q = new QueryParameters('a=1&a=2&s=x+y%21&e=');
    expect(q.string('a')).toBe('2');
    expect(q.string('s')).toBe('x y!');
    expect(status400(() => q.string('e'))).toBe("Expected non-empty value for request property 'e'");
    expect(q.string('missing')).toBeUndefined();
  });

  it('parses booleans like Java, integers strictly, and durations with units', () => {
    const q = new QueryParameters('t=TRUE&f=yes&n=12&bad=1x&timeout=1500ms');
    expect(q.boolean('t')).toBe(true);
    expect(q.boolean('f')).toBe(false);
    expect(q.integer('n')).toBe(12);
    expect(status400(() => q.integer('bad'))).toContain("Failed parsing '1x'");
    expect(q.durationMs('timeout')).toBe(1500);
    expect(parseDurationMs('5s')).toBe(5000);
    expect(parseDurationMs('2')).toBe(2000);
    expect(parseDurationMs('0.5s')).toBe(500);
    expect(parseDurationMs('soon')).toBeUndefined();
  });

  it("reads unsigned longs and durations with the Java parsers' messages", () => {
    const message = (fn: () => unknown) => status400(fn);
    expect(parseUnsignedLong('+18446744073709551615')).toBe(18446744073709551615n);
    expect(message(() => parseUnsignedLong('18446744073709551616'))).toBe(
      "Failed parsing '18446744073709551616': String value 18446744073709551616 exceeds range of unsigned long.",
    );
    expect(message(() => parseUnsignedLong('12345678901234567x9'))).toBe(
      `Failed parsing '12345678901234567x9': Error at index 17 in: "12345678901234567x"`,
    );
    expect(message(() => parseUnsignedLong('1234567890123456789x'))).toBe(
      "Failed parsing '1234567890123456789x': Bad digit at end of 1234567890123456789x",
    );
    expect(message(() => parseUnsignedLong(''))).toBe(`Failed parsing '': For input string: ""`);
    expect([
      parseJavaMilliseconds('1e1s'),
      parseJavaMilliseconds('2m'),
      parseJavaMilliseconds('1.5ms'),
      parseJavaMilliseconds(' 3 s '),
      parseJavaMilliseconds('1ks'),
    ]).toEqual([1000, 2000, 1, 3000, 1_000_000]);
    expect(message(() => parseJavaMilliseconds('-1s'))).toBe(
      "Failed parsing '-1s': Error parsing '-1s': Invalid number '-1s'",
    );
    expect(message(() => parseJavaMilliseconds('.s'))).toBe(
      `Failed parsing '.s': Error parsing '.s': For input string: "."`,
    );
  });

  it('names a disallowed parameter with the path', () => {
    expect(status400(() => new QueryParameters('route=x').disallow('/p/', 'concurrency', 'route'))).toBe(
      "May not specify 'route' at '/p/'",
    );
  });
});

describe('Accept negotiation for streamed visits', () => {
  it('picks JSONL only when application/jsonl has the highest q (ties included)', () => {
    expect(prefersJsonl('application/jsonl')).toBe(true);
    expect(prefersJsonl('application/json;q=0.5, application/jsonl')).toBe(true);
    expect(prefersJsonl('application/json, application/jsonl')).toBe(true);
    expect(prefersJsonl('application/json, application/jsonl;q=0.9')).toBe(false);
    expect(prefersJsonl('application/json')).toBe(false);
    expect(prefersJsonl('*/*')).toBe(false);
    expect(prefersJsonl(undefined)).toBe(false);
  });

  it('refuses an Accept header that does not parse', () => {
    const unparseable =
      'The request contained an unparseable HTTP Accept header. See: https://docs.vespa.ai/en/reference/api/document-v1.html#accept';
    expect(status400(() => prefersJsonl('application/jsonl;q=high'))).toBe(unparseable);
    expect(status400(() => prefersJsonl('not a media type'))).toBe(unparseable);
  });
});

describe('field sets', () => {
  it('understands the named sets and lists', () => {
    expect(parseFieldSet(undefined)).toEqual({ kind: 'all' });
    expect(parseFieldSet('[all]')).toEqual({ kind: 'all' });
    expect(parseFieldSet('music:[document]')).toEqual({ kind: 'all' });
    expect(parseFieldSet('[id]')).toEqual({ kind: 'none' });
    expect(parseFieldSet('[none]')).toEqual({ kind: 'none' });
    expect(parseFieldSet('music:a,b')).toEqual({ kind: 'some', fields: ['a', 'b'] });
    expect(projectFields({ a: 1, b: 2, c: 3 }, parseFieldSet('music:a,c'))).toEqual({ a: 1, c: 3 });
    expect(status400(() => parseFieldSet('[bogus]'))).toContain("Unknown field set '[bogus]'");
  });
});

describe('update operations', () => {
  it('parses field paths', () => {
    expect(parseFieldPath('m{k}')).toEqual([
      { kind: 'field', name: 'm' },
      { kind: 'key', key: 'k' },
    ]);
    expect(parseFieldPath('a[3]')).toEqual([
      { kind: 'field', name: 'a' },
      { kind: 'index', index: 3 },
    ]);
    expect(parseFieldPath('s.sub')).toEqual([
      { kind: 'field', name: 's' },
      { kind: 'field', name: 'sub' },
    ]);
  });

  it('assigns, and clears with null', () => {
    expect(applyUpdate({ a: 1, b: 2 }, { a: { assign: 5 }, b: { assign: null }, c: { assign: 'x' } })).toEqual({
      a: 5,
      c: 'x',
    });
  });

  it('modify takes the forms TensorModifyUpdateReader takes, with its messages', () => {
    const stored = {
      t: {
        cells: [
          { address: { x: '0' }, value: 1 },
          { address: { x: '1' }, value: 2 },
        ],
      },
    };
    expect(
      applyUpdate(stored, { t: { modify: { operation: 'add', cells: [{ address: { x: '1' }, value: 0.5 }] } } }),
    ).toEqual({
      t: {
        cells: [
          { address: { x: '0' }, value: 1 },
          { address: { x: '1' }, value: 2.5 },
        ],
      },
    });
    // Short cells and blocks are accepted (a 200), the stored value kept where the type is needed to apply them.
    expect(applyUpdate(stored, { t: { modify: { operation: 'add', cells: { '1': 0.5 } } } })).toEqual(stored);
    expect(applyUpdate(stored, { t: { modify: { operation: 'multiply', blocks: { a: [2, 2] } } } })).toEqual(stored);
    expect(status400(() => applyUpdate(stored, { t: { modify: { cells: [] } } }))).toBe(
      "Modify update for field 't' does not contain an operation",
    );
    expect(status400(() => applyUpdate(stored, { t: { modify: { operation: 'divide', cells: [] } } }))).toBe(
      "Unknown operation 'divide' in modify update for field 't'",
    );
    expect(status400(() => applyUpdate(stored, { t: { modify: { operation: 'add' } } }))).toBe(
      "Modify update for field 't' does not contain tensor cells",
    );
  });

  it('does arithmetic', () => {
    const out = applyUpdate(
      { i: 10, d: 10, m: 3, q: 9 },
      { i: { increment: 2 }, d: { decrement: 4 }, m: { multiply: 2 }, q: { divide: 2 } },
    );
    expect(out).toEqual({ i: 12, d: 6, m: 6, q: 4 });
    expect(status400(() => applyUpdate({ q: 1 }, { q: { divide: 0 } }))).toContain('zero');
  });

  it('starts arithmetic on a field without a value from 0, but not on a missing map entry or element', () => {
    expect(
      applyUpdate({ t: 'x' }, { i: { increment: 3 }, d: { decrement: 2 }, m: { multiply: 5 }, q: { divide: 4 } }),
    ).toEqual({ t: 'x', i: 3, d: -2, m: 0, q: 0 });
    expect(applyUpdate({ w: { a: 1 } }, { 'w{b}': { increment: 1 } })).toEqual({ w: { a: 1 } });
    expect(applyUpdate({ arr: [1] }, { arr: { match: { element: 5, increment: 1 } } })).toEqual({ arr: [1] });
    expect(status400(() => applyUpdate({}, { q: { divide: 0 } }))).toContain('zero');
  });

  it('adds to and removes from arrays and weighted sets', () => {
    expect(applyUpdate({ a: [1, 2] }, { a: { add: [3] } })).toEqual({ a: [1, 2, 3] });
    expect(applyUpdate({ a: [1, 2, 3, 2] }, { a: { remove: [2] } })).toEqual({ a: [1, 3] });
    expect(applyUpdate({ w: { x: 1 } }, { w: { add: { y: 2 } } })).toEqual({ w: { x: 1, y: 2 } });
    expect(applyUpdate({ w: { x: 1, y: 2 } }, { w: { remove: { x: 0 } } })).toEqual({ w: { y: 2 } });
    expect(applyUpdate({}, { w: { add: { y: 2 } } })).toEqual({ w: { y: 2 } });
  });

  it('works on map entries, array elements and struct fields through paths', () => {
    expect(applyUpdate({ m: { k: 'v', j: 'w' } }, { 'm{k}': { remove: 0 } })).toEqual({ m: { j: 'w' } });
    expect(applyUpdate({ m: { k: 'v' } }, { 'm{n}': { assign: 'z' } })).toEqual({ m: { k: 'v', n: 'z' } });
    expect(applyUpdate({ a: [1, 2, 3] }, { 'a[1]': { assign: 9 } })).toEqual({ a: [1, 9, 3] });
    expect(applyUpdate({ s: { sub: 1, o: 2 } }, { 's.sub': { assign: 5 } })).toEqual({ s: { sub: 5, o: 2 } });
    expect(applyUpdate({ w: { a: 1 } }, { 'w{a}': { increment: 4 } })).toEqual({ w: { a: 5 } });
  });

  it('creates nothing for an array element past the end or in a missing array; a missing map is made for its key', () => {
    expect(applyUpdate({ a: [1] }, { 'a[7]': { assign: 9 } })).toEqual({ a: [1] });
    expect(applyUpdate({}, { 'a[0]': { assign: 9 } })).toEqual({});
    expect(applyUpdate({}, { 's.a[0]': { assign: 9 } })).toEqual({});
    expect(applyUpdate({}, { a: { match: { element: 0, assign: 9 } } })).toEqual({});
    expect(applyUpdate({}, { 'm{k}': { assign: 'v' } })).toEqual({ m: { k: 'v' } });
    expect(status400(() => applyUpdate({}, { a: { match: { element: 0, match: {} } } }))).toContain('Nested');
  });

  it('matches elements', () => {
    expect(applyUpdate({ w: { a: 1 } }, { w: { match: { element: 'a', increment: 2 } } })).toEqual({ w: { a: 3 } });
    expect(applyUpdate({ arr: [5, 6] }, { arr: { match: { element: 1, multiply: 2 } } })).toEqual({ arr: [5, 12] });
  });

  it('never modifies the input', () => {
    const current = { a: [1], w: { x: 1 } };
    applyUpdate(current, { a: { add: [2] }, w: { remove: ['x'] } });
    expect(current).toEqual({ a: [1], w: { x: 1 } });
  });

  it('names an unsupported operation', () => {
    expect(status400(() => applyUpdate({}, { f: { frobnicate: 1 } }))).toBe(
      "Unknown update operation 'frobnicate' on field 'f'",
    );
    expect(status400(() => applyUpdate({}, { f: 3 }))).toContain("field 'f'");
  });
});

describe('store', () => {
  it('keeps tombstones and counts only live documents', () => {
    const s = new ClusterStore('c');
    s.put('id:ns:t::a', { x: 1 });
    s.put('id:ns:t::b', undefined, undefined, '{"x":2}');
    expect(s.size).toBe(2);
    s.remove('id:ns:t::a');
    expect(s.size).toBe(1);
    expect(s.document('id:ns:t::a')).toBeUndefined();
    expect(s.entry('id:ns:t::a')?.removed).toBe(true);
    s.remove('id:ns:t::never');
    expect(s.orderedEntries()).toHaveLength(3);
  });

  it('co-locates documents of one group or number in one bucket', () => {
    expect(idParts('id:ns:t:g=x:1').bucket).toBe(idParts('id:ns:t:g=x:2').bucket);
    expect(idParts('id:ns:t:n=5:1').bucket).toBe(5);
    expect(idParts('id:ns:t:n=-1:1').bucket).toBe(0xffffffff);
  });

  it('round-trips continuation tokens and refuses foreign ones', () => {
    const p = { bucket: 12345, id: 'id:ns:t::a:b' };
    expect(decodeContinuation(encodeContinuation(p))).toEqual(p);
    expect(status400(() => decodeContinuation('AAAA'))).toBe("Failed parsing 'AAAA': BufferUnderflowException");
  });

  it('keeps the visit order when documents arrive after it was built, without disturbing a running visit', () => {
    const s = new ClusterStore('c');
    for (let i = 0; i < 100; i++) s.put(`id:ns:t::a${i}`, { i });
    const before = s.orderedEntries();
    for (let i = 0; i < 30; i++) s.put(`id:ns:t::b${i}`, { i });
    s.remove('id:ns:t::gone');
    const after = s.orderedEntries();
    expect(before).toHaveLength(100);
    expect(after).toHaveLength(131);
    expect(after.map((e) => e.id)).toEqual(
      [...after].sort((x, y) => x.bucket - y.bucket || (x.id < y.id ? -1 : 1)).map((e) => e.id),
    );
  });

  it('finds the resume point in the visit order', () => {
    const s = new ClusterStore('c');
    for (let i = 0; i < 50; i++) s.put(`id:ns:t::${i}`, { i });
    const ordered = s.orderedEntries();
    const at = ordered[20];
    expect(indexAfter(ordered, { bucket: at.bucket, id: at.id })).toBe(21);
  });

  it("gives a visit only its bucket space's and slice's entries, in visit order, all slices the store once", () => {
    const s = new ClusterStore('c');
    for (let i = 0; i < 300; i++) s.put(`id:ns:${i % 3 === 0 ? 'g' : 't'}::${i}`, { i });
    const ordered = s.orderedEntries();
    const globalTypes = new Set(['g']);
    for (const global of [false, true]) {
      const seen: string[] = [];
      for (let sliceId = 0; sliceId < 7; sliceId++) {
        const share = sliceOf(ordered, { globalTypes, global, slices: 7, sliceId });
        expect(share.every((e) => e.bucket % 7 === sliceId && (e.type === 'g') === global)).toBe(true);
        expect(share).toEqual(ordered.filter((e) => share.includes(e)));
        seen.push(...share.map((e) => e.id));
      }
      expect(seen.sort()).toEqual(
        ordered
          .filter((e) => (e.type === 'g') === global)
          .map((e) => e.id)
          .sort(),
      );
      expect(sliceOf(ordered, { globalTypes, global, slices: undefined, sliceId: undefined })).toHaveLength(
        global ? 100 : 200,
      );
    }
    expect(sliceOf(ordered, { globalTypes: new Set(), global: true, slices: undefined, sliceId: undefined })).toEqual(
      [],
    );
  });

  it('narrows a visit of one location to its bucket', () => {
    const s = new ClusterStore('c');
    for (let i = 0; i < 40; i++) s.put(`id:ns:t:n=${i % 4}:${i}`, { i });
    const stretch = bucketStretch(s.orderedEntries(), 2);
    expect(stretch.map((e) => e.id).sort()).toEqual(
      Array.from({ length: 10 }, (_, k) => `id:ns:t:n=2:${4 * k + 2}`).sort(),
    );
    expect(bucketStretch(s.orderedEntries(), 9)).toEqual([]);
  });
});

describe('fault settings', () => {
  it('validates patches', () => {
    expect(validateFaultPatch({ errorRate: 0.5, feedBlock: true })).toBeUndefined();
    expect(validateFaultPatch({ errorRate: 2 })).toContain('errorRate');
    expect(validateFaultPatch({ nonsense: 1 })).toContain('nonsense');
    expect(validateFaultPatch({ errorStatuses: [200] })).toContain('errorStatuses');
  });

  it('draws deterministically from the seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    const f = new Faults({ errorRate: 0.5, seed: 7 });
    const g = new Faults({ errorRate: 0.5, seed: 7 });
    const drawsF = Array.from({ length: 20 }, () => f.drawError());
    expect(Array.from({ length: 20 }, () => g.drawError())).toEqual(drawsF);
    expect(drawsF.some((s) => s !== 0)).toBe(true);
    expect(drawsF.some((s) => s === 0)).toBe(true);
  });
});
