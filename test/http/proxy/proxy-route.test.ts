import { describe, expect, it } from 'vitest';
import { isVespaBulkError } from '../../../src/core/errors.js';
import { parseProxyUrl, proxyFor, proxySecrets } from '../../../src/http/proxy/proxy-route.js';

function basic(credentials: string): string {
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

/** The VB_USAGE error `fn` throws; fails when it throws nothing or something else. */
function usageError(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_USAGE'), String(err)).toBe(true);
    return err as Error;
  }
  throw new Error('expected a VB_USAGE error');
}

describe('parseProxyUrl', () => {
  it('reads scheme, host and port, with curl defaults', () => {
    const cases: [string, string, 'http:' | 'https:', string, number][] = [
      ['http://proxy.corp:3128', 'http://proxy.corp:3128', 'http:', 'proxy.corp', 3128],
      ['proxy.corp:3128', 'http://proxy.corp:3128', 'http:', 'proxy.corp', 3128],
      ['  proxy.corp  ', 'http://proxy.corp:1080', 'http:', 'proxy.corp', 1080],
      ['http://proxy.corp', 'http://proxy.corp:1080', 'http:', 'proxy.corp', 1080],
      // The URL parser drops :80 as http's default; a proxy's default is 1080, so :80 must survive.
      ['http://proxy.corp:80', 'http://proxy.corp:80', 'http:', 'proxy.corp', 80],
      ['http://proxy.corp:0080/', 'http://proxy.corp:80', 'http:', 'proxy.corp', 80],
      ['https://proxy.corp', 'https://proxy.corp:443', 'https:', 'proxy.corp', 443],
      ['https://proxy.corp:443', 'https://proxy.corp:443', 'https:', 'proxy.corp', 443],
      ['HTTPS://Proxy.CORP:8443', 'https://proxy.corp:8443', 'https:', 'proxy.corp', 8443],
      ['http://[::1]:3128', 'http://[::1]:3128', 'http:', '::1', 3128],
      ['[2001:db8::1]', 'http://[2001:db8::1]:1080', 'http:', '2001:db8::1', 1080],
      ['http://10.0.0.1:8080/some/path?q=1#frag', 'http://10.0.0.1:8080', 'http:', '10.0.0.1', 8080],
      ['http://u:p@h:81/x@y', 'http://h:81', 'http:', 'h', 81],
    ];
    for (const [value, shown, protocol, host, port] of cases) {
      const route = parseProxyUrl(value, '--proxy');
      expect({ shown: route.shown, protocol: route.protocol, host: route.host, port: route.port }, value).toEqual({
        shown,
        protocol,
        host,
        port,
      });
      expect(route.source).toBe('--proxy');
    }
  });

  it('turns user info into a Basic authorization, percent-decoded, and keeps it out of `shown`', () => {
    const cases: [string, string | undefined][] = [
      ['http://proxy:3128', undefined],
      ['http://@proxy:3128', undefined],
      ['http://alice:s3cret@proxy:3128', basic('alice:s3cret')],
      ['http://alice@proxy:3128', basic('alice:')],
      ['http://alice:@proxy:3128', basic('alice:')],
      ['http://:s3cret@proxy:3128', basic(':s3cret')],
      ['http://al%40ce:p%40ss%3Aw0rd@proxy:3128', basic('al@ce:p@ss:w0rd')],
      ['alice:p%C3%A4ss@proxy:3128', basic('alice:päss')],
    ];
    for (const [value, authorization] of cases) {
      const route = parseProxyUrl(value, 'HTTPS_PROXY');
      expect(route.authorization, value).toBe(authorization);
      expect(route.shown, value).toBe('http://proxy:3128');
    }
  });

  it('refuses SOCKS proxies, naming the source', () => {
    for (const scheme of ['socks4', 'socks4a', 'socks5', 'socks5h', 'SOCKS5']) {
      const err = usageError(() => parseProxyUrl(`${scheme}://user:hunter22@proxy:1080`, 'ALL_PROXY'));
      expect(err.message).toContain('ALL_PROXY');
      expect(err.message).toContain('SOCKS proxies are not supported; use an HTTP proxy (http://host:port)');
      expect(err.message).not.toContain('hunter22');
    }
  });

  it('refuses other schemes, a missing host, port 0 and unparsable URLs, never echoing the password', () => {
    const values = [
      'ftp://user:hunter22@proxy:21',
      'http://user:hunter22@',
      'http://user:hunter22@:3128',
      'http://user:hunter22@proxy:99999',
      'http://user:hunter22@proxy:0',
      'http://user:hunter22@pro xy:3128',
      'http://user:hun/ter22@proxy:3128',
      'user:hunter22@proxy:port',
      'http://user:%zzhunter22@proxy:3128',
      '',
      '   ',
    ];
    for (const value of values) {
      const err = usageError(() => parseProxyUrl(value, 'https_proxy'));
      expect(err.message, value).toMatch(/^https_proxy: /);
      expect(err.message, value).not.toContain('hunter22');
      expect(err.message, value).not.toContain('ter22');
    }
    expect(usageError(() => parseProxyUrl('http://user:hunter22@pro xy:3128', '--proxy')).message).toContain(
      "'http://user:***@pro xy:3128'",
    );
  });
});

describe('proxyFor', () => {
  const corp = 'http://proxy.corp:3128';

  it('takes no proxy when the setting is false, whatever the environment', () => {
    expect(proxyFor(false, 'https://vespa.example:443', { HTTPS_PROXY: corp, ALL_PROXY: corp })).toBeUndefined();
  });

  it('reads the environment in curl order, lower case before upper case, the scheme before all_proxy', () => {
    const env = {
      https_proxy: 'http://lower-https:1',
      HTTPS_PROXY: 'http://upper-https:2',
      http_proxy: 'http://lower-http:3',
      HTTP_PROXY: 'http://upper-http:4',
      all_proxy: 'http://lower-all:5',
      ALL_PROXY: 'http://upper-all:6',
    };
    const cases: [Record<string, string>, string, string | undefined, string | undefined][] = [
      [env, 'https://vespa.example', 'http://lower-https:1', 'https_proxy'],
      [{ ...env, https_proxy: '' }, 'https://vespa.example', 'http://upper-https:2', 'HTTPS_PROXY'],
      [{ ...env, https_proxy: '', HTTPS_PROXY: '' }, 'https://vespa.example', 'http://lower-all:5', 'all_proxy'],
      [{ ALL_PROXY: 'http://upper-all:6' }, 'https://vespa.example', 'http://upper-all:6', 'ALL_PROXY'],
      [env, 'http://vespa.example:8080', 'http://lower-http:3', 'http_proxy'],
      [{ ...env, http_proxy: '' }, 'http://vespa.example:8080', 'http://upper-http:4', 'HTTP_PROXY'],
      // An https_proxy is for https: targets only, and http_proxy for http: ones.
      [{ https_proxy: corp }, 'http://vespa.example', undefined, undefined],
      [{ http_proxy: corp }, 'https://vespa.example', undefined, undefined],
      [{}, 'https://vespa.example', undefined, undefined],
      [{ HTTPS_PROXY: '   ' }, 'https://vespa.example', undefined, undefined],
    ];
    for (const [environment, target, shown, source] of cases) {
      const route = proxyFor(undefined, target, environment);
      expect([route?.shown, route?.source], `${target} ${JSON.stringify(environment)}`).toEqual([shown, source]);
    }
  });

  it('never takes a proxy from the environment for a loopback target, but does take a given one', () => {
    const env = { HTTPS_PROXY: corp, HTTP_PROXY: corp, ALL_PROXY: corp };
    const loopback = [
      'http://localhost:8080',
      'http://LOCALHOST.:8080',
      'https://api.localhost',
      'http://127.0.0.1:8080',
      'http://127.255.0.9',
      'http://[::1]:8080',
      'http://[0:0:0:0:0:0:0:1]:8080',
    ];
    for (const target of loopback) {
      expect(proxyFor(undefined, target, env), target).toBeUndefined();
      expect(proxyFor(corp, target, {})?.shown, target).toBe(corp);
    }
    for (const target of ['http://128.0.0.1', 'http://localhost.example', 'http://mylocalhost', 'http://[::2]']) {
      expect(proxyFor(undefined, target, env)?.source, target).toBe('HTTP_PROXY');
    }
  });

  it('applies NO_PROXY (no_proxy first) to the environment and to a given setting, by host and port', () => {
    const env = { HTTPS_PROXY: corp, HTTP_PROXY: corp };
    const cases: [Record<string, string>, string | undefined, string, boolean][] = [
      [{ ...env, NO_PROXY: 'vespa.example' }, undefined, 'https://a.vespa.example', false],
      [{ NO_PROXY: 'vespa.example' }, corp, 'https://vespa.example', false],
      [{ NO_PROXY: 'other.example' }, corp, 'https://vespa.example', true],
      // no_proxy wins over NO_PROXY; an empty no_proxy counts as unset.
      [{ ...env, no_proxy: 'other.example', NO_PROXY: 'vespa.example' }, undefined, 'https://vespa.example', true],
      [{ ...env, no_proxy: '', NO_PROXY: 'vespa.example' }, undefined, 'https://vespa.example', false],
      // The target's port defaults by scheme.
      [{ ...env, NO_PROXY: 'vespa.example:443' }, undefined, 'https://vespa.example', false],
      [{ ...env, NO_PROXY: 'vespa.example:80' }, undefined, 'http://vespa.example', false],
      [{ ...env, NO_PROXY: 'vespa.example:443' }, undefined, 'http://vespa.example', true],
      [{ ...env, NO_PROXY: 'vespa.example:8080' }, undefined, 'https://vespa.example:8080', false],
      [{ ...env, NO_PROXY: '10.0.0.0/8' }, undefined, 'https://10.1.2.3:8443', false],
      [{ ...env, NO_PROXY: '[fe80::1]:8080' }, undefined, 'http://[fe80::1]:8080', false],
      [{ ...env, NO_PROXY: '*' }, corp, 'https://vespa.example', false],
    ];
    for (const [environment, setting, target, proxied] of cases) {
      expect(proxyFor(setting, target, environment) !== undefined, `${target} ${JSON.stringify(environment)}`).toBe(
        proxied,
      );
    }
  });

  it('names the variable a bad value came from, and --proxy for a given setting', () => {
    expect(usageError(() => proxyFor(undefined, 'https://v', { https_proxy: 'socks5://p' })).message).toMatch(
      /^https_proxy: SOCKS/,
    );
    expect(usageError(() => proxyFor('ftp://p', 'https://v', {})).message).toMatch(/^--proxy: /);
  });

  it('accepts a URL object as the target and refuses targets that are not http or https', () => {
    expect(proxyFor(corp, new URL('https://vespa.example'), {})?.shown).toBe(corp);
    for (const target of ['ftp://vespa.example', 'file:///tmp/x', 'not a url']) {
      usageError(() => proxyFor(corp, target, {}));
    }
  });

  it('reads process.env when no environment is given', () => {
    const saved = process.env.HTTPS_PROXY;
    process.env.HTTPS_PROXY = 'http://from-process-env:3128';
    try {
      expect(proxyFor(undefined, 'https://vespa.example')?.shown).toBe('http://from-process-env:3128');
    } finally {
      if (saved === undefined) delete process.env.HTTPS_PROXY;
      else process.env.HTTPS_PROXY = saved;
    }
  });
});

describe('proxySecrets', () => {
  it('gives every password of the setting and the proxy variables, raw, decoded and as the Basic token', () => {
    const secrets = proxySecrets('http://alice:p%40ssword@proxy:3128', {
      HTTPS_PROXY: 'http://bob:hunter22@proxy:3128',
      all_proxy: 'carol:not/a%zzurl@proxy',
      NO_PROXY: 'user:nopass@ignored',
      PATH: 'x:y@z',
    });
    const token = basic('alice:p@ssword');
    expect(secrets).toEqual(
      expect.arrayContaining([
        'p%40ssword',
        'p@ssword',
        token,
        token.slice('Basic '.length),
        'hunter22',
        basic('bob:hunter22').slice('Basic '.length),
        'not/a%zzurl',
      ]),
    );
    expect(secrets).not.toContain('nopass');
    expect(secrets).not.toContain('y');
    expect(secrets).not.toContain('');
  });

  it('is empty without passwords, and still reads the environment when the setting is false', () => {
    expect(proxySecrets(undefined, { HTTPS_PROXY: 'http://proxy:3128', http_proxy: 'http://alice@proxy' })).toEqual([]);
    expect(proxySecrets(false, { HTTPS_PROXY: 'http://a:hunter22@p' })).toContain('hunter22');
  });
});
