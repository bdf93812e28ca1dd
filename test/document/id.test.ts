import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatDocumentId, parseDocumentId, toDocumentPath, toVisitPath } from '../../src/document/id.js';
import { VespaBulkError } from '../../src/core/errors.js';

describe('parseDocumentId', () => {
  it('parses the three forms, keeping colons and slashes in the local part', () => {
    expect(parseDocumentId('id:ns:music::a:b/c')).toEqual({
      namespace: 'ns',
      type: 'music',
      kind: 'plain',
      local: 'a:b/c',
    });
    expect(parseDocumentId('id:ns:music:n=-42:x')).toEqual({
      namespace: 'ns',
      type: 'music',
      kind: 'number',
      number: '-42',
      local: 'x',
    });
    expect(parseDocumentId('id:ns:music:g=eu:x')).toEqual({
      namespace: 'ns',
      type: 'music',
      kind: 'group',
      group: 'eu',
      local: 'x',
    });
  });

  it.each([
    ['doc:ns:music::a', "must start with 'id:'"],
    ['id:ns:music', 'expected'],
    ['id::music::a', 'empty namespace'],
    ['id:ns:::a', 'empty document type'],
    ['id:ns:music::', 'empty local part'],
    ['id:ns:music:n=abc:a', 'signed 64-bit'],
    ['id:ns:music:n=9223372036854775808:a', 'signed 64-bit'],
    ['id:ns:music:g=:a', 'non-empty group'],
    ['id:ns:music:x=1:a', 'unknown key/value'],
    ['id:ns:music::a\u0001b', 'control character'],
  ])('rejects %j with a reason', (id, reason) => {
    let error: unknown;
    try {
      parseDocumentId(id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VespaBulkError);
    expect((error as VespaBulkError).code).toBe('VB_BAD_DOCUMENT_ID');
    expect((error as VespaBulkError).message).toContain(reason);
    expect((error as VespaBulkError).place?.documentId).toBe(id);
  });

  it('accepts the int64 bounds and tab in the local part', () => {
    expect(parseDocumentId('id:ns:t:n=-9223372036854775808:a').kind).toBe('number');
    expect(parseDocumentId('id:ns:t:n=9223372036854775807:a').kind).toBe('number');
    expect(parseDocumentId('id:ns:t::a\tb').local).toBe('a\tb');
  });

  it('round-trips through formatDocumentId', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.constantFrom('', 'n=7', 'g=grp'), (local, kv) => {
        const id = `id:ns:t:${kv}:${local}`;
        let parsed;
        try {
          parsed = parseDocumentId(id);
        } catch (e) {
          expect((e as VespaBulkError).code).toBe('VB_BAD_DOCUMENT_ID');
          return;
        }
        expect(formatDocumentId(parsed)).toBe(id);
      }),
    );
  });
});

describe('toDocumentPath', () => {
  it('encodes each part so that the service decodes it back', () => {
    expect(toDocumentPath('id:my ns:music::a/b:c+d%e')).toBe('/document/v1/my%20ns/music/docid/a%2Fb%3Ac%2Bd%25e');
    expect(toDocumentPath('id:ns:music:n=12:x')).toBe('/document/v1/ns/music/number/12/x');
    expect(toDocumentPath('id:ns:music:g=a/b:x')).toBe('/document/v1/ns/music/group/a%2Fb/x');
  });

  it('never produces a bare . or .. segment', () => {
    expect(toDocumentPath('id:ns:music::..')).toBe('/document/v1/ns/music/docid/%2E%2E');
    expect(toDocumentPath('id:ns:music::.')).toBe('/document/v1/ns/music/docid/%2E');
    expect(toDocumentPath('id:ns:music::...')).toBe('/document/v1/ns/music/docid/...');
  });

  it('decodes back to the same parts for any local part', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(s)),
        (local) => {
          const path = toDocumentPath({ namespace: 'ns', type: 't', kind: 'plain', local });
          const segments = path.split('/');
          expect(segments).toHaveLength(7);
          expect(decodeURIComponent(segments[6])).toBe(local);
        },
      ),
    );
  });

  it('builds visit paths', () => {
    expect(toVisitPath('ns', 'music')).toBe('/document/v1/ns/music/docid/');
    expect(toVisitPath()).toBe('/document/v1/');
  });
});

// The Go client parses `n=` with strconv.ParseInt(s, 10, 64) (client/go/internal/vespa/document/document.go:101)
// and writes the path's number as uint64 (http.go:126-129); the handler reads /number/ as unsigned.
describe("the number of an 'n=' id, as the Go client reads it", () => {
  it("reads 'n=+5' and 'n=007' and sends them as /number/5/ and /number/7/", () => {
    expect(parseDocumentId('id:ns:music:n=+5:x')).toEqual({
      namespace: 'ns',
      type: 'music',
      kind: 'number',
      number: '+5',
      local: 'x',
    });
    expect(formatDocumentId(parseDocumentId('id:ns:music:n=+5:x'))).toBe('id:ns:music:n=+5:x');
    expect(toDocumentPath('id:ns:music:n=+5:x')).toBe('/document/v1/ns/music/number/5/x');
    expect(toDocumentPath('id:ns:music:n=007:x')).toBe('/document/v1/ns/music/number/7/x');
    expect(toDocumentPath('id:ns:music:n=+9223372036854775807:x')).toBe(
      '/document/v1/ns/music/number/9223372036854775807/x',
    );
  });

  it.each([
    [
      'id:ns:music:n=-1:x',
      "invalid document id 'id:ns:music:n=-1:x': 'n=-1' is negative: /document/v1 reads the path's number as unsigned, so no client can write a document with a negative 'n'",
    ],
    ['id:ns:music:n=-0:x', undefined],
  ])('refuses a negative n for the path of %j, naming the id', (id, message) => {
    if (message === undefined) {
      expect(toDocumentPath(id)).toBe('/document/v1/ns/music/number/0/x');
      return;
    }
    let error: unknown;
    try {
      toDocumentPath(id);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VespaBulkError);
    expect((error as VespaBulkError).code).toBe('VB_BAD_DOCUMENT_ID');
    expect((error as VespaBulkError).message).toBe(message);
    expect((error as VespaBulkError).place?.documentId).toBe(id);
  });

  it.each([
    [
      'id:ns:music:n=9223372036854775808:x',
      "invalid document id 'id:ns:music:n=9223372036854775808:x': 'n=9223372036854775808' is outside the signed 64-bit range [-9223372036854775808, 9223372036854775807]",
    ],
    [
      'id:ns:music:n=18446744073709551615:x',
      "invalid document id 'id:ns:music:n=18446744073709551615:x': 'n=18446744073709551615' is outside the signed 64-bit range [-9223372036854775808, 9223372036854775807]",
    ],
    ['id:ns:music:n=+:x', "invalid document id 'id:ns:music:n=+:x': 'n=' needs a signed 64-bit integer, got '+'"],
    [
      'id:ns:music:n=1_000:x',
      "invalid document id 'id:ns:music:n=1_000:x': 'n=' needs a signed 64-bit integer, got '1_000'",
    ],
    ['id:ns:music:n= 5:x', "invalid document id 'id:ns:music:n= 5:x': 'n=' needs a signed 64-bit integer, got ' 5'"],
  ])('refuses %j as ParseInt does', (id, message) => {
    expect(() => parseDocumentId(id)).toThrow(message);
  });
});
