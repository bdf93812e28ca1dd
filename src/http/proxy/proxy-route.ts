import { VespaBulkError } from '../../core/errors.js';
import { bypassesProxy, parseNoProxy } from './no-proxy.js';

/**
 * Which forward proxy a client goes through: a URL (`http://[user:password@]host[:port]` or `https://...`; without a
 * scheme, `http://`), `false` for none, or undefined for the environment, as curl reads it (see `proxyFor`). Written
 * once here; every option set links here through `TransportOptions.proxy`.
 */
export type ProxySetting = string | false;

/** A proxy, resolved for one endpoint. */
export interface ProxyRoute {
  /** The proxy without credentials, path or query, e.g. `http://proxy.corp:3128`: for messages, summaries and reports. */
  shown: string;
  protocol: 'http:' | 'https:';
  /** Host name or address to connect to, IPv6 without brackets. */
  host: string;
  port: number;
  /** `Basic <base64(user:password)>` from the URL's user info, percent-decoded first; undefined without user info. */
  authorization?: string;
  /** Where the setting came from, for messages: `--proxy`, or the variable's name as found (`https_proxy`, ...). */
  source: string;
}

/** curl's default ports: 1080 for an http:// proxy, 443 for an https:// one. */
const defaultPorts = { 'http:': 1080, 'https:': 443 } as const;

/** Parses a proxy URL; VB_USAGE errors name `source` and never echo a password. */
export function parseProxyUrl(value: string, source: string): ProxyRoute {
  const text = value.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new VespaBulkError('VB_USAGE', `${source}: not a proxy URL: '${masked(text)}' (http://host:port)`);
  }
  if (/^socks/i.test(url.protocol))
    throw new VespaBulkError(
      'VB_USAGE',
      `${source}: SOCKS proxies are not supported; use an HTTP proxy (http://host:port): '${masked(text)}'`,
    );
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new VespaBulkError(
      'VB_USAGE',
      `${source}: a proxy is http:// or https://, not ${url.protocol}//: '${masked(text)}'`,
    );
  if (url.hostname === '')
    throw new VespaBulkError('VB_USAGE', `${source}: the proxy URL names no host: '${masked(text)}'`);
  const protocol = url.protocol;
  const port = url.port === '' ? defaultPorts[protocol] : Number(url.port);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const route: ProxyRoute = {
    shown: `${protocol}//${url.hostname}:${port}`,
    protocol,
    host,
    port,
    source,
  };
  if (url.username !== '' || url.password !== '' || withScheme.includes('@')) {
    const user = decode(url.username, source);
    const password = decode(url.password, source);
    if (user !== '' || password !== '')
      route.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  return route;
}

/**
 * The route to `target` (an endpoint URL), or undefined for a direct connection:
 * - `setting === false`: none;
 * - NO_PROXY (`no_proxy` first) matching the target's host and port: none, for a given `setting` too, as curl;
 * - a `setting` string: that proxy, for every host, loopback ones too;
 * - else the environment: `https_proxy`/`HTTPS_PROXY` for https, `http_proxy`/`HTTP_PROXY` for http, then
 *   `all_proxy`/`ALL_PROXY`, lower case first, empty values unset; but a loopback target takes none from the
 *   environment (Go's rule, which the official CLI has: the local simulator stays reachable from a shell with
 *   HTTPS_PROXY set).
 */
export function proxyFor(
  setting: ProxySetting | undefined,
  target: string | URL,
  env: NodeJS.ProcessEnv = process.env,
): ProxyRoute | undefined {
  if (setting === false) return undefined;
  const url = typeof target === 'string' ? new URL(target) : target;
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new VespaBulkError('VB_USAGE', `a proxy carries http:// and https:// only, not ${url.protocol}//`);
  const schemePort = url.protocol === 'https:' ? 443 : 80;
  const port = url.port === '' ? schemePort : Number(url.port);
  const noProxy = firstSet(env, ['no_proxy', 'NO_PROXY']);
  if (noProxy !== undefined && bypassesProxy(parseNoProxy(noProxy.value), url.hostname, port)) return undefined;
  if (setting !== undefined) return parseProxyUrl(setting, '--proxy');
  if (isLoopbackHost(url.hostname)) return undefined;
  const names =
    url.protocol === 'https:'
      ? ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY']
      : ['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'];
  const found = firstSet(env, names);
  return found === undefined ? undefined : parseProxyUrl(found.value, found.name);
}

/** Every credential in the proxy setting and the proxy variables of `env`, for `redact` (src/http/tls.ts). */
export function proxySecrets(setting: ProxySetting | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const values = [
    ...(typeof setting === 'string' ? [setting] : []),
    ...['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'].map((n) => env[n] ?? ''),
  ];
  const secrets: string[] = [];
  for (const value of values) {
    if (!value.includes('@')) continue;
    let route: ProxyRoute;
    try {
      route = parseProxyUrl(value, 'proxy');
    } catch {
      continue;
    }
    if (route.authorization === undefined) continue;
    const token = route.authorization.slice('Basic '.length);
    const [, password = ''] = /:(.*)$/s.exec(Buffer.from(token, 'base64').toString()) ?? [];
    secrets.push(token);
    if (password !== '') secrets.push(password);
    const raw = /\/\/[^/@]*?:([^/@]*)@/.exec(value)?.[1];
    if (raw !== undefined && raw !== '' && raw !== password) secrets.push(raw);
  }
  return secrets;
}

function firstSet(env: NodeJS.ProcessEnv, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') return { name, value };
  }
  return undefined;
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    host === '::1' ||
    host === '0:0:0:0:0:0:0:1'
  );
}

function decode(part: string, source: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new VespaBulkError('VB_USAGE', `${source}: the proxy URL's user info is not valid percent-encoding`);
  }
}

/** The URL with any password replaced by `***`. */
function masked(text: string): string {
  return text.replace(
    /^([^@/]*\/\/)?([^@/:]*):[^@/]*@/,
    (_m, scheme: string | undefined, user: string) => `${scheme ?? ''}${user}:***@`,
  );
}
