import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { DocumentRequestEncoder, compressAboveBytes, type EncodedBody } from '../../src/http/document-request.js';

describe('DocumentRequestEncoder', () => {
  it("puts the session parameters ahead of the operation's own, each encoded", () => {
    const e = new DocumentRequestEncoder({ prefix: '/base', route: 'a b', tracelevel: 2, dryRun: true });
    expect(e.operationPath('/document/v1/ns/t/docid/x', 't.a == "1"', true, 1234.4)).toBe(
      '/base/document/v1/ns/t/docid/x?route=a%20b&tracelevel=2&dryRun=true&condition=t.a%20%3D%3D%20%221%22&create=true&timeout=1234ms',
    );
    const plain = new DocumentRequestEncoder({ prefix: '' });
    expect(plain.operationPath('/p', undefined, false, undefined)).toBe('/p?create=false');
    expect(plain.operationPath('/p', undefined, undefined, 0.2)).toBe('/p?timeout=1ms');
    expect(plain.operationPath('/p', undefined, undefined, undefined)).toBe('/p');
  });

  it('wraps the raw fields bytes as they are, and gzips only above the threshold when compressing', () => {
    const e = new DocumentRequestEncoder({ prefix: '', compress: true, headers: { authorization: 'Bearer t' } });
    const small: EncodedBody = {};
    e.encodeBody(Buffer.from('{"a":1.50}'), small);
    expect(small.body!.toString()).toBe('{"fields":{"a":1.50}}');
    expect(small.headers).toEqual(['content-type', 'application/json', 'authorization', 'Bearer t']);

    const text = `{"big":"${'y'.repeat(compressAboveBytes)}"}`;
    const big: EncodedBody = {};
    e.encodeBody(Buffer.from(text), big);
    expect(gunzipSync(big.body!).toString()).toBe(`{"fields":${text}}`);
    expect(big.headers).toEqual([
      'content-type',
      'application/json',
      'content-encoding',
      'gzip',
      'authorization',
      'Bearer t',
    ]);

    const none: EncodedBody = {};
    e.encodeBody(undefined, none);
    expect(none.body).toBeNull();
    expect(none.headers).toEqual(['authorization', 'Bearer t']);

    const uncompressed: EncodedBody = {};
    new DocumentRequestEncoder({ prefix: '' }).encodeBody(Buffer.from(text), uncompressed);
    expect(uncompressed.body!.toString()).toBe(`{"fields":${text}}`);
  });

  it('describes the body itself: a user content-type is not sent beside its own', () => {
    const e = new DocumentRequestEncoder({ prefix: '', headers: { 'Content-Type': 'text/plain', 'x-k': 'v' } });
    const encoded: EncodedBody = {};
    e.encodeBody(Buffer.from('{}'), encoded);
    expect(encoded.headers).toEqual(['content-type', 'application/json', 'x-k', 'v']);
  });
});
