import { describe, expect, it } from 'vitest';
import { isVespaBulkError } from '../../../src/core/errors.js';
import {
  connectHeader,
  connectRequestHead,
  parseConnectResponse,
  type ConnectResponse,
} from '../../../src/http/proxy/connect-response.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

type Parsed = ReturnType<typeof parseConnectResponse>;

/** What parseConnectResponse gives for `buf`: its result, or the message of the VB_BAD_RESPONSE it throws. */
function outcome(buf: Buffer, maxHeadBytes?: number): Parsed | { error: string } {
  try {
    return parseConnectResponse(buf, maxHeadBytes);
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_BAD_RESPONSE'), String(err)).toBe(true);
    return { error: (err as Error).message };
  }
}

/**
 * Feeds `input` one byte more at a time, as reads from a socket would come: every prefix before the first
 * answer (or error) is undefined, and the first one is what the whole input gives, with `rest` cut to the
 * bytes fed. Returns the whole input's outcome and how many bytes it took.
 */
function fedBytewise(input: Buffer, maxHeadBytes?: number): { whole: Parsed | { error: string }; after: number } {
  const whole = outcome(input, maxHeadBytes);
  for (let n = 0; n <= input.length; n++) {
    const partial = outcome(input.subarray(0, n), maxHeadBytes);
    if (partial === undefined) continue;
    if ('error' in partial) {
      expect(partial).toEqual(whole);
    } else {
      expect(whole).toBeDefined();
      expect(partial.response).toEqual((whole as { response: ConnectResponse }).response);
      // The head has just come whole: nothing after it yet.
      expect(partial.rest.length).toBe(0);
    }
    return { whole, after: n };
  }
  expect(whole).toBeUndefined();
  return { whole, after: input.length + 1 };
}

describe('parseConnectResponse', () => {
  it('reads the final answer, the same whole or a byte at a time, with `rest` exactly the bytes after its head', () => {
    const cases: [string, string, ConnectResponse][] = [
      [
        'HTTP/1.1 200 Connection established\r\n\r\n',
        '',
        { status: 200, reason: 'Connection established', headers: [] },
      ],
      ['HTTP/1.0 200\r\n\r\n', '\x16\x03\x01', { status: 200, reason: '', headers: [] }],
      ['HTTP/1.1 200 \r\n\r\n', 'x', { status: 200, reason: '', headers: [] }],
      ['HTTP/1.1 204 \tNo  Content\t\r\n\r\n', '', { status: 204, reason: '\tNo  Content\t', headers: [] }],
      ['HTTP/1.1 200 \xe9t\xe9 ok\r\n\r\n', '', { status: 200, reason: '\xe9t\xe9 ok', headers: [] }],
      [
        // A 2xx's Content-Length and Transfer-Encoding are ignored: the tunnel starts right after the head.
        'HTTP/1.1 200 OK\r\nProxy-Agent:  Squid/6.1 \t\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\nX-Empty:\r\n\r\n',
        '\x16\x03\x01\x02\x00\r\n\n\r\x00garbage that is the tunnel',
        {
          status: 200,
          reason: 'OK',
          headers: [
            ['proxy-agent', 'Squid/6.1'],
            ['content-length', '10'],
            ['transfer-encoding', 'chunked'],
            ['x-empty', ''],
          ],
        },
      ],
      [
        // Interim answers (not 101) are skipped, their fields too.
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nVia: 1.1 p\r\n\r\n',
        'TLS',
        { status: 200, reason: 'OK', headers: [['via', '1.1 p']] },
      ],
      [
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\nContent-Length: 5\r\n\r\n',
        'hello',
        {
          status: 407,
          reason: 'Proxy Authentication Required',
          headers: [
            ['proxy-authenticate', 'Basic realm="corp"'],
            ['content-length', '5'],
          ],
        },
      ],
      ['HTTP/1.0 502 Bad Gateway\r\n\r\n', '<html>', { status: 502, reason: 'Bad Gateway', headers: [] }],
      ['HTTP/1.1 599 X\r\n\r\n', '', { status: 599, reason: 'X', headers: [] }],
    ];
    for (const [head, tunnel, response] of cases) {
      const input = bytes(head + tunnel);
      const { whole, after } = fedBytewise(input);
      expect(whole, head).toEqual({ response, rest: bytes(tunnel) });
      expect(after, head).toBe(head.length);
    }
  });

  it('waits while the head is incomplete', () => {
    for (const partial of [
      '',
      'HTTP/1.1 200 OK',
      'HTTP/1.1 200 OK\r',
      'HTTP/1.1 200 OK\r\n',
      'HTTP/1.1 200 OK\r\n\r',
    ]) {
      expect(parseConnectResponse(bytes(partial)), JSON.stringify(partial)).toBeUndefined();
    }
    // A complete interim answer is not the final one.
    expect(parseConnectResponse(bytes('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 2'))).toBeUndefined();
  });

  it('rejects malformed heads with VB_BAD_RESPONSE, as soon as the offending bytes come', () => {
    const cases: [string, RegExp][] = [
      ['HTTP/2 200 OK\r\n\r\n', /does not start with HTTP\/1\.0 or HTTP\/1\.1: "HTTP\/2 200 OK"/],
      ['HTTP/1.2 200 OK\r\n\r\n', /does not start with HTTP\/1\.0/],
      ['http/1.1 200 OK\r\n\r\n', /does not start with HTTP\/1\.0/],
      [' HTTP/1.1 200 OK\r\n\r\n', /does not start with HTTP\/1\.0/],
      ['\r\nHTTP/1.1 200 OK\r\n\r\n', /does not start with HTTP\/1\.0 or HTTP\/1\.1: ""/],
      ['HTTP/1.1\r\n\r\n', /malformed status line: "HTTP\/1\.1"/],
      ['HTTP/1.1  200 OK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 20 OK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 2000 OK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 099 Low\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 600 High\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 200OK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 2x0 OK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 200 O\x00K\r\n\r\n', /malformed status line: "HTTP\/1\.1 200 O\\x00K"/],
      ['HTTP/1.1 200 O\x7fK\r\n\r\n', /malformed status line/],
      ['HTTP/1.1 101 Switching Protocols\r\n\r\n', /a proxy may not switch protocols on CONNECT/],
      ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching\r\n\r\n', /may not switch protocols/],
      ['HTTP/1.1 200 OK\n\r\n', /bare LF \(not CRLF\) in line 1, after "HTTP\/1\.1 200 OK"/],
      ['HTTP/1.1 200 OK\r\n\n\r\n', /bare LF .* in line 2, after ""/],
      ['HTTP/1.1 200 OK\r\nA: b\n\r\n', /bare LF .* in line 2, after "A: b"/],
      ['HTTP/1.1 200 OK\rX\r\n\r\n', /bare CR \(not CRLF\) in line 1, after "HTTP\/1\.1 200 OK"/],
      ['HTTP/1.1 200 OK\r\nA: b\r\r\n\r\n', /bare CR .* in line 2, after "A: b"/],
      ['HTTP/1.1 200 OK\r\n\r\r\n', /bare CR .* in line 2/],
      ['HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n', /folded header line \(obs-fold, RFC 9112 §5\.2\): " c"/],
      ['HTTP/1.1 200 OK\r\n\tA: b\r\n\r\n', /folded header line/],
      ['HTTP/1.1 200 OK\r\nA : b\r\n\r\n', /whitespace before the colon of a header line: "A : b"/],
      ['HTTP/1.1 200 OK\r\nA\t: b\r\n\r\n', /whitespace before the colon/],
      ['HTTP/1.1 200 OK\r\nA b: c\r\n\r\n', /header name that is not a token: "A b: c"/],
      ['HTTP/1.1 200 OK\r\nA(: b\r\n\r\n', /header name that is not a token/],
      ['HTTP/1.1 200 OK\r\n: b\r\n\r\n', /header name that is not a token/],
      ['HTTP/1.1 200 OK\r\nNoColon\r\n\r\n', /header line without a colon: "NoColon"/],
      ['HTTP/1.1 200 OK\r\nA: b\x01c\r\n\r\n', /control character in a header value: "A: b\\x01c"/],
      ['HTTP/1.1 200 OK\r\nA: b\x7f\r\n\r\n', /control character in a header value/],
      ['HTTP/1.1 200 OK\r\nA: \x00\r\n\r\n', /control character in a header value/],
      ['HTTP/1.1 103 Early\r\nA b: c\r\n\r\nHTTP/1.1 200 OK\r\n\r\n', /header name that is not a token/],
    ];
    for (const [input, message] of cases) {
      const { whole, after } = fedBytewise(bytes(input));
      expect(whole, JSON.stringify(input)).toHaveProperty('error', expect.stringMatching(message));
      expect((whole as { error: string }).error).toMatch(/^the proxy's answer to CONNECT /);
      // It is known before the head would have ended: no waiting for the blank line.
      expect(after, JSON.stringify(input)).toBeLessThan(input.length);
    }
  });

  it('quotes at most about 40 characters of an offending line, escaped', () => {
    const line = `A: \x01${'"\\'.repeat(10)}${'v'.repeat(500)}`;
    const error = outcome(bytes(`HTTP/1.1 200 OK\r\n${line}\r\n\r\n`)) as { error: string };
    const quoted = /: (".*")$/.exec(error.error)?.[1];
    expect(quoted).toBe(`"A: \\x01${'\\"\\\\'.repeat(10)}${'v'.repeat(16)}…"`);
  });

  it('rejects heads longer than maxHeadBytes, all heads together, as soon as that many bytes came', () => {
    const head = 'HTTP/1.1 200 OK\r\nProxy-Agent: p\r\n\r\n';
    expect(outcome(bytes(`${head}tunnel`), head.length)).toEqual({
      response: { status: 200, reason: 'OK', headers: [['proxy-agent', 'p']] },
      rest: bytes('tunnel'),
    });
    const over = fedBytewise(bytes(`${head}tunnel`), head.length - 1);
    expect(over.whole).toEqual({
      error: `the proxy's answer to CONNECT has a head longer than ${head.length - 1} bytes`,
    });
    expect(over.after).toBe(head.length - 1);

    // A head that never ends fails at the limit, not later.
    const endless = fedBytewise(bytes(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(200)}`), 64);
    expect(endless.whole).toEqual({ error: expect.stringContaining('longer than 64 bytes') });
    expect(endless.after).toBe(64);

    const interim = 'HTTP/1.1 100 Continue\r\n\r\n';
    const final = 'HTTP/1.1 200 OK\r\n\r\n';
    expect(outcome(bytes(interim.repeat(3) + final), interim.length * 3 + final.length)).toHaveProperty('response');
    expect(outcome(bytes(interim.repeat(3) + final), interim.length * 3 + final.length - 1)).toHaveProperty(
      'error',
      expect.stringContaining('longer than'),
    );
    // The default limit is 16 KiB.
    expect(outcome(bytes(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(16 * 1024)}`))).toHaveProperty('error');
    expect(outcome(bytes(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(16 * 1024 - 40)}`))).toBeUndefined();
  });
});

describe('connectHeader', () => {
  it('gives the first value of a header, the name compared case-insensitively', () => {
    const response: ConnectResponse = {
      status: 407,
      reason: '',
      headers: [
        ['proxy-authenticate', 'Negotiate'],
        ['proxy-authenticate', 'Basic realm="x"'],
      ],
    };
    expect(connectHeader(response, 'Proxy-Authenticate')).toBe('Negotiate');
    expect(connectHeader(response, 'via')).toBeUndefined();
  });
});

describe('connectRequestHead', () => {
  it('asks for a tunnel to host:port, IPv6 in brackets, with Proxy-Authorization when given', () => {
    const cases: [string, number, string | undefined, string][] = [
      ['vespa.example', 443, undefined, 'CONNECT vespa.example:443 HTTP/1.1\r\nHost: vespa.example:443\r\n\r\n'],
      ['10.0.0.1', 8080, undefined, 'CONNECT 10.0.0.1:8080 HTTP/1.1\r\nHost: 10.0.0.1:8080\r\n\r\n'],
      ['::1', 8080, undefined, 'CONNECT [::1]:8080 HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n'],
      ['[2001:db8::1]', 443, undefined, 'CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n'],
      [
        'vespa.example',
        443,
        'Basic YTpi',
        'CONNECT vespa.example:443 HTTP/1.1\r\nHost: vespa.example:443\r\nProxy-Authorization: Basic YTpi\r\n\r\n',
      ],
    ];
    for (const [host, port, authorization, head] of cases) {
      expect(connectRequestHead(host, port, authorization).toString('latin1')).toBe(head);
    }
  });

  it('refuses a host, port or authorization that would break the head, never echoing the authorization', () => {
    const refusals: [string, number, string | undefined][] = [
      ['vespa.example\r\nX-Evil: 1', 443, undefined],
      ['vespa.example\n', 443, undefined],
      ['vespa example', 443, undefined],
      ['vespa.example\t', 443, undefined],
      ['', 443, undefined],
      ['a/b', 443, undefined],
      ['a@b', 443, undefined],
      ['[::1', 443, undefined],
      ['[not-an-address]', 443, undefined],
      ['[]', 443, undefined],
      ['vespa.example', 0, undefined],
      ['vespa.example', 65536, undefined],
      ['vespa.example', 1.5, undefined],
      ['vespa.example', Number.NaN, undefined],
      ['vespa.example', 443, 'Basic s3cretT0ken\r\nX-Evil: 1'],
      ['vespa.example', 443, 'Basic s3cretT0ken\u0100'],
    ];
    for (const [host, port, authorization] of refusals) {
      let thrown: unknown;
      try {
        connectRequestHead(host, port, authorization);
      } catch (err) {
        thrown = err;
      }
      expect(isVespaBulkError(thrown, 'VB_USAGE'), JSON.stringify([host, port, authorization])).toBe(true);
      expect((thrown as Error).message).not.toContain('s3cretT0ken');
      expect((thrown as Error).message).not.toMatch(/[\r\n]/);
    }
  });
});
