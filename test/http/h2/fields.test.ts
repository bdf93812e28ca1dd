import { describe, expect, it } from 'vitest';
import {
  type AnswerHead,
  pathFault,
  readAnswerHead,
  requestFieldsFault,
  trailersFault,
  writePath,
} from '../../../src/http/h2/fields.js';

const head = (): AnswerHead => ({ status: -1, contentLength: -1 });

describe("an answer's head (RFC 9113 8.3.2)", () => {
  it('reads :status and content-length and leaves the regular fields in place of the list', () => {
    const h = head();
    const fields = [':status', '200', 'content-length', '5', 'x-a', 'b'];
    expect(readAnswerHead(fields, h)).toBeUndefined();
    expect(h).toEqual({ status: 200, contentLength: 5 });
    expect(fields).toEqual(['content-length', '5', 'x-a', 'b']);
  });

  it.each([
    [[':status', '20'], /:status "20"/],
    [[':status', '200', ':status', '200'], /two :status/],
    [['x-a', 'b', ':status', '200'], /pseudo-header after/],
    [[':path', '/'], /pseudo-header ":path"/],
    [['x-a', 'b'], /no :status/],
    [[':status', '101'], /101/],
    [[':status', '200', 'connection', 'close'], /connection-specific/],
    [[':status', '200', 'content-length', '1', 'content-length', '2'], /content-length "2"/],
    [[':status', '200', 'content-length', '-1'], /content-length/],
  ])('refuses %j', (fields, why) => {
    expect(readAnswerHead(fields.slice(), head())).toMatch(why);
  });

  it('passes 1xx on for the caller to tell', () => {
    const h = head();
    expect(readAnswerHead([':status', '103'], h)).toBeUndefined();
    expect(h.status).toBe(103);
  });

  it('refuses trailers with pseudo-headers or connection-specific fields', () => {
    expect(trailersFault(['x-t', '1'])).toBeUndefined();
    expect(trailersFault([':status', '200'])).toMatch(/pseudo-header/);
    expect(trailersFault(['transfer-encoding', 'chunked'])).toMatch(/connection-specific/);
  });
});

describe("a request's fields and path (RFC 9113 8.2)", () => {
  it('refuses what HTTP/2 may not carry', () => {
    expect(requestFieldsFault(['x-a', 'b'], false)).toBeUndefined();
    expect(requestFieldsFault([':method', 'GET'], false)).toMatch(/pseudo-header among/);
    expect(requestFieldsFault(['x-a', 'b\r\nc'], false)).toBeDefined();
    expect(requestFieldsFault(['te', 'gzip'], false)).toMatch(/connection-specific/);
    expect(requestFieldsFault(['x-a', 'é€'], false)).toMatch(/beyond latin1/);
    expect(pathFault('/a b')).toBeDefined();
    expect(pathFault('')).toBeDefined();
    expect(pathFault('/a?b=c')).toBeUndefined();
  });

  it('writes :path as a literal never indexed, and says -1 for a path it may not send', () => {
    const out = Buffer.alloc(64);
    const end = writePath(out, 0, '/doc');
    expect([...out.subarray(0, end)]).toEqual([0x14, 4, ...Buffer.from('/doc')]);
    expect(writePath(out, 0, '/a b')).toBe(-1);
  });
});
