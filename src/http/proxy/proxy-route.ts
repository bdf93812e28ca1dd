import { BlockList, isIP } from 'node:net';
import { VespaBulkError } from '../../core/errors.js';
import { bypassesProxy, parseNoProxy } from './no-proxy.js';

/**
 * Which forward proxy a client goes through: a URL (`http://[user:password@]host[:port]` or `https://...`;
 * without a scheme, `http://`), `false` for none, or undefined: the environment, as curl reads it (see
 * {@link proxyFor}). Written once here; every option set links here.
 */
export type ProxySetting = string | false;

/** A forward proxy, parsed from a {@link ProxySetting} or a proxy variable. */
export interface ProxyRoute {
  /** The proxy without credentials, path or query, e.g. `http://proxy.corp:3128` (IPv6 host in brackets): for messages, summaries and reports. */
  shown: string;
  protocol: 'http:' | 'https:';
  /** Host name or address to connect to, IPv6 without brackets. */
  host: string;
  port: number;
  /** `Basic <base64(user:password)>` from the URL's user info, percent-decoded first; undefined without user info. */
  authorization?: string;
  /** Where the setting came from, for messages: '--proxy' for a given setting, else the variable's name as found ('https_proxy', 'HTTPS_PROXY', ...). */
  source: string;
}

/** curl's default proxy port for http:// (not 80); https:// proxies default to 443. */
const defaultPort = { 'http:': 1080, 'https:': 443 } as const;

const socksSchemes = new Set(['socks4:', 'socks4a:', 'socks5:', 'socks5h:']);

/** The proxy variables, in the order curl consults them for each target scheme. */
const proxyVariables = {
  'https:': ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'],
  'http:': ['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'],
} as const;

const targetDefaultPort = { 'http:': 80, 'https:': 443 } as const;

const noProxyVariables = ['no_proxy', 'NO_PROXY'] as const;

/** A value split where its user info is, without parsing it as a URL (which may fail): for masking and secrets. */
interface RawParts {
  /** `scheme://` as written, or ''. */
  scheme: string;
  /** The user info, undefined without an `@`. */
  userinfo: string | undefined;
  /** What follows the user info's `@` (or the scheme, without one). */
  rest: string;
}

function rawParts(value: string): RawParts {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0] ?? '';
  const afterScheme = value.slice(scheme.length);
  // The last `@` ends the user info: a password may hold an unencoded `@` or `/`, and over-masking is harmless.
  const at = afterScheme.lastIndexOf('@');
  if (at < 0) return { scheme, userinfo: undefined, rest: afterScheme };
  return { scheme, userinfo: afterScheme.slice(0, at), rest: afterScheme.slice(at + 1) };
}

/** The password as written in `value`'s user info (still percent-encoded), or undefined. */
function rawPassword(value: string): string | undefined {
  const { userinfo } = rawParts(value.trim());
  const colon = userinfo?.indexOf(':') ?? -1;
  return userinfo !== undefined && colon >= 0 ? userinfo.slice(colon + 1) : undefined;
}

/** `value` with the password of its user info replaced by `***`: safe to put in a message. */
function masked(value: string): string {
  const { scheme, userinfo, rest } = rawParts(value);
  if (userinfo === undefined) return value;
  const colon = userinfo.indexOf(':');
  return colon < 0 ? value : `${scheme}${userinfo.slice(0, colon)}:***@${rest}`;
}

function usage(source: string, message: string): VespaBulkError {
  return new VespaBulkError('VB_USAGE', `${source}: ${message}`);
}

/**
 * The proxy's port, as written or the default: the WHATWG URL drops a port equal to its scheme's default (80 for http:), where a
 * proxy's default is 1080, so `http://proxy:80` must be read from the text.
 */
function proxyPort(url: URL & { protocol: 'http:' | 'https:' }, value: string): number {
  if (url.port !== '') return Number(url.port);
  // As the URL parser reads it: the authority ends at the first / ? # or \, the host starts after its last @.
  const authority = value.slice(value.indexOf('//') + 2).split(/[/?#\\]/)[0] ?? '';
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  const afterHost = hostPort.startsWith('[') ? hostPort.slice(hostPort.indexOf(']') + 1) : hostPort;
  return url.protocol === 'http:' && /:0*80$/.test(afterHost) ? 80 : defaultPort[url.protocol];
}

function decoded(part: string, source: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw usage(source, 'the proxy URL has a user name or password that is not valid percent-encoding');
  }
}

/** `Basic ...` for the URL's user info, or undefined without one (`http://@host` has none). */
function basicAuthorization(url: URL, source: string): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const credentials = `${decoded(url.username, source)}:${decoded(url.password, source)}`;
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

/** Parses a proxy URL; VB_USAGE errors name `source` and never echo a password. */
export function parseProxyUrl(value: string, source: string): ProxyRoute {
  const trimmed = value.trim();
  if (trimmed === '') throw usage(source, 'the proxy URL is empty');
  const withScheme = rawParts(trimmed).scheme === '' ? `http://${trimmed}` : trimmed;
  const scheme = `${withScheme.slice(0, withScheme.indexOf(':')).toLowerCase()}:`;
  if (socksSchemes.has(scheme)) {
    throw usage(source, 'SOCKS proxies are not supported; use an HTTP proxy (http://host:port)');
  }
  if (scheme !== 'http:' && scheme !== 'https:') {
    throw usage(source, `unsupported proxy scheme '${scheme}' in '${masked(trimmed)}'; use http:// or https://`);
  }
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw usage(source, `not a valid proxy URL: '${masked(trimmed)}' (expected http://[user:password@]host[:port])`);
  }
  const protocol = scheme;
  const port = proxyPort(url as URL & { protocol: typeof protocol }, withScheme);
  if (port === 0) throw usage(source, `the proxy URL '${masked(trimmed)}' has port 0`);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const authorization = basicAuthorization(url, source);
  return {
    shown: `${protocol}//${url.hostname}:${port}`,
    protocol,
    host,
    port,
    ...(authorization !== undefined && { authorization }),
    source,
  };
}

/** Loopback targets never take a proxy from the environment (Go's rule, which the official Vespa CLI inherits). */
const loopbackAddresses = new BlockList();
loopbackAddresses.addSubnet('127.0.0.0', 8, 'ipv4');
loopbackAddresses.addAddress('::1', 'ipv6');

function isLoopback(hostname: string): boolean {
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname.toLowerCase().replace(/\.$/, '');
  const version = isIP(host);
  if (version !== 0) return loopbackAddresses.check(host, version === 4 ? 'ipv4' : 'ipv6');
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The first of `names` set to a non-blank value in `env`, with its name. */
function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return undefined;
}

function targetUrl(target: string | URL): URL & { protocol: 'http:' | 'https:' } {
  let url: URL | undefined;
  try {
    url = target instanceof URL ? target : new URL(target);
  } catch {
    // Said below.
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    const shown = masked(String(target));
    throw new VespaBulkError('VB_USAGE', `no proxy route to '${shown}': not an http:// or https:// URL`);
  }
  return url as URL & { protocol: 'http:' | 'https:' };
}

/**
 * The route to `target` (an endpoint URL), or undefined for a direct connection. `setting` false: none;
 * a string: that proxy, for every host, loopback too; undefined: the environment as curl reads it
 * (`https_proxy`/`HTTPS_PROXY` for an https: target, `http_proxy`/`HTTP_PROXY` for http:, then
 * `all_proxy`/`ALL_PROXY`), except for a loopback target. NO_PROXY (`no_proxy`, then `NO_PROXY`) applies to
 * both, as curl applies it to `-x`. Empty variables count as unset.
 * @example
 * ```ts
 * import { proxyFor } from 'vespa-bulk';
 *
 * // Which proxy a feed to this endpoint would go through, as the summary's `http.proxy` names it.
 * const route = proxyFor(undefined, 'https://vespa.example.com', { HTTPS_PROXY: 'http://proxy.corp:3128', NO_PROXY: '.internal' });
 * console.log(route?.shown); // 'http://proxy.corp:3128'
 * ```
 */
export function proxyFor(
  setting: ProxySetting | undefined,
  target: string | URL,
  env: NodeJS.ProcessEnv = process.env,
): ProxyRoute | undefined {
  if (setting === false) return undefined;
  const url = targetUrl(target);
  const noProxy = firstSet(env, noProxyVariables);
  const port = url.port !== '' ? Number(url.port) : targetDefaultPort[url.protocol];
  if (noProxy && bypassesProxy(parseNoProxy(noProxy.value), url.hostname, port)) return undefined;
  if (setting !== undefined) return parseProxyUrl(setting, '--proxy');
  if (isLoopback(url.hostname)) return undefined;
  const variable = firstSet(env, proxyVariables[url.protocol]);
  return variable && parseProxyUrl(variable.value, variable.name);
}

/**
 * The proxy a connection to `endpoint` goes through with `setting`, as summaries, reports and the protocol note name
 * it (without credentials), or undefined for a direct connection.
 */
export function proxyShown(setting: ProxySetting | undefined, endpoint: string): string | undefined {
  return proxyFor(setting, endpoint)?.shown;
}

/**
 * Every password in the proxy setting and the proxy variables of `env`, for `redact` in src/http/tls.ts
 * (which already masks URL passwords; this also gives the decoded forms and the Basic token). Never throws:
 * a value that does not parse still has its password taken from the text.
 */
export function proxySecrets(setting: ProxySetting | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const values = typeof setting === 'string' ? [setting] : [];
  for (const name of new Set([...proxyVariables['https:'], ...proxyVariables['http:']])) {
    const value = env[name];
    if (value !== undefined) values.push(value);
  }
  const secrets = new Set<string>();
  for (const value of values) {
    const password = rawPassword(value);
    if (password === undefined || password === '') continue;
    secrets.add(password);
    try {
      secrets.add(decodeURIComponent(password));
    } catch {
      // Not percent-encoding: the raw form is the only one.
    }
    try {
      const authorization = parseProxyUrl(value, 'proxy').authorization;
      if (authorization !== undefined) {
        secrets.add(authorization);
        secrets.add(authorization.slice('Basic '.length));
      }
    } catch {
      // A setting that does not parse is reported by proxyFor; its password is already in the list.
    }
  }
  return [...secrets];
}
