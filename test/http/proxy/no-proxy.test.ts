import { describe, expect, it } from 'vitest';
import { bypassesProxy, parseNoProxy } from '../../../src/http/proxy/no-proxy.js';

/** [NO_PROXY value, hostname as URL.hostname gives it, port, bypasses the proxy]. */
type Case = [string, string, number, boolean];

function check(cases: Case[]): void {
  for (const [value, host, port, expected] of cases) {
    expect(bypassesProxy(parseNoProxy(value), host, port), `NO_PROXY=${JSON.stringify(value)} ${host}:${port}`).toBe(
      expected,
    );
  }
}

describe('NO_PROXY', () => {
  it('reads `*` as the whole value only, as every host', () => {
    check([
      ['*', 'example.com', 443, true],
      ['  *  ', '10.1.2.3', 80, true],
      ['*', '[::1]', 80, true],
      // `*` among other entries is no wildcard (curl compares it as a name).
      ['*,other.com', 'example.com', 443, false],
      ['other.com *', 'example.com', 443, false],
    ]);
  });

  it('matches a name and its subdomains, never a longer name that ends the same', () => {
    check([
      ['example.com', 'example.com', 443, true],
      ['example.com', 'a.example.com', 443, true],
      ['example.com', 'a.b.example.com', 443, true],
      ['example.com', 'badexample.com', 443, false],
      ['example.com', 'example.com.evil.org', 443, false],
      ['a.example.com', 'example.com', 443, false],
      ['.example.com', 'example.com', 443, true],
      ['.example.com', 'a.example.com', 443, true],
      ['*.example.com', 'example.com', 443, true],
      ['*.example.com', 'a.example.com', 443, true],
      ['*.example.com', 'badexample.com', 443, false],
    ]);
  });

  it('compares names case-insensitively, one trailing dot ignored on either side', () => {
    check([
      ['Example.COM', 'example.com', 443, true],
      ['example.com', 'A.EXAMPLE.com', 443, true],
      ['example.com.', 'example.com', 443, true],
      ['example.com', 'example.com.', 443, true],
      ['example.com.', 'a.example.com.', 443, true],
      ['example.com..', 'example.com', 443, false],
    ]);
  });

  it('splits on commas and whitespace, ignoring empty entries', () => {
    check([
      ['a.org,b.org', 'b.org', 80, true],
      ['a.org, b.org', 'b.org', 80, true],
      [' a.org\tb.org\nc.org ', 'c.org', 80, true],
      [',,a.org,,', 'a.org', 80, true],
      ['', 'a.org', 80, false],
      [' , ', 'a.org', 80, false],
    ]);
  });

  it('limits a host:port entry to that port', () => {
    check([
      ['example.com:8080', 'example.com', 8080, true],
      ['example.com:8080', 'example.com', 443, false],
      ['example.com:8080', 'a.example.com', 8080, true],
      ['10.0.0.1:8080', '10.0.0.1', 8080, true],
      ['10.0.0.1:8080', '10.0.0.1', 80, false],
      ['[::1]:8080', '[::1]', 8080, true],
      ['[::1]:8080', '::1', 8080, true],
      ['[::1]:8080', '[::1]', 8081, false],
    ]);
  });

  it('matches IP literals by address, not spelling, with or without brackets', () => {
    check([
      ['10.0.0.1', '10.0.0.1', 80, true],
      ['10.0.0.1', '10.0.0.2', 80, false],
      ['::1', '[::1]', 80, true],
      ['::0001', '[::1]', 80, true],
      ['[::0001]', '::1', 80, true],
      ['0:0:0:0:0:0:0:1', '[::1]', 80, true],
      ['2001:DB8::1', '[2001:db8::1]', 80, true],
      ['2001:db8::1', '[2001:db8::2]', 80, false],
    ]);
  });

  it('matches CIDR ranges', () => {
    check([
      ['10.0.0.0/8', '10.255.1.2', 80, true],
      ['10.0.0.0/8', '11.0.0.1', 80, false],
      ['192.168.1.0/24', '192.168.1.77', 80, true],
      ['192.168.1.0/24', '192.168.2.1', 80, false],
      ['0.0.0.0/0', '8.8.8.8', 80, true],
      ['10.0.0.1/32', '10.0.0.1', 80, true],
      ['10.0.0.1/32', '10.0.0.2', 80, false],
      ['fe80::/10', '[fe80::1]', 80, true],
      ['fe80::/10', '[febf::1]', 80, true],
      ['fe80::/10', '[fec0::1]', 80, false],
      ['[fe80::]/10', '[fe80::1]', 80, true],
      ['[fe80::/10]', '[fe80::1]', 80, true],
      // An IPv4-mapped IPv6 address is the IPv4 address.
      ['10.0.0.0/8', '[::ffff:a00:1]', 80, true],
    ]);
  });

  it('never matches a name with an address entry, nor an address with a name entry (no DNS)', () => {
    check([
      ['127.0.0.1', 'localhost', 80, false],
      ['10.0.0.0/8', 'internal.corp', 80, false],
      ['::1', 'localhost', 80, false],
      ['localhost', '127.0.0.1', 80, false],
      ['localhost', '[::1]', 80, false],
      // A name the URL parser would read as an address is compared as a name by curl: it matches nothing.
      ['127.1', '127.0.0.1', 80, false],
      ['127.1', '127.1', 80, false],
    ]);
  });

  it('ignores malformed entries, keeping the others', () => {
    for (const value of [
      '10.0.0.0/99',
      '10.0.0.0/',
      '10.0.0.0/x',
      'fe80::/129',
      'example.com:notaport',
      'example.com:0',
      'example.com:65536',
      'example.com:',
      '[::1',
      '[::1]:x',
      'a.*.example.com',
      ':8080',
    ]) {
      expect(() => parseNoProxy(value)).not.toThrow();
      check([
        [`${value},keep.org`, 'keep.org', 80, true],
        [value, 'example.com', 80, false],
        [value, '10.0.0.1', 80, false],
      ]);
    }
  });
});
