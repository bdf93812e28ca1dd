import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatDocumentId, parseDocumentId, toDocumentPath, toVisitPath } from '../../src/document/id.js';
import { VespaBulkError } from '../../src/errors.js';

describe('parseDocumentId', () => {
  it('parses the three forms, keeping colons and slashes in the local part', () => {
    expect(parseDocumentId('id:ns:music::a:b/c')).toEqual({ namespace: 'ns', type: 'music', kind: 'plain', local: 'a:b/c' });
    expect(parseDocumentId('id:ns:music:n=-42:x')).toEqual({ namespace: 'ns', type: 'music', kind: 'number', number: '-42', local: 'x' });
    expect(parseDocumentId('id:ns:music:g=eu:x')).toEqual({ namespace: 'ns', type: 'music', kind: 'group', group: 'eu', local: 'x' });
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
      fc.property(fc.string({ minLength: 1 }).filter((s) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(s)), (local) => {
        const path = toDocumentPath({ namespace: 'ns', type: 't', kind: 'plain', local });
        const segments = path.split('/');
        expect(segments).toHaveLength(7);
        expect(decodeURIComponent(segments[6])).toBe(local);
      }),
    );
  });

  it('builds visit paths', () => {
    expect(toVisitPath('ns', 'music')).toBe('/document/v1/ns/music/docid/');
    expect(toVisitPath()).toBe('/document/v1/');
  });
});
