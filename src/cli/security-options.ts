import { parseProxyUrl, type ProxySetting } from '../http/proxy/proxy-route.js';
import type { Argv } from 'yargs';
import { VespaBulkError } from '../core/errors.js';
import { isInlinePem, type SecurityOptions } from '../http/tls.js';

/**
 * `--ca`, `--cert`, `--key` and `--token`, shared by every command that talks to a cluster. Each may also come
 * from the environment (see `securityEnv`); a flag wins over its variable. No yargs defaults are used for
 * them, so `--help` never prints a secret taken from the environment.
 */
export interface SecurityArgs {
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  /** A URL, or false from `--no-proxy`. */
  proxy?: string | false;
  'proxy-ca'?: string;
}

/**
 * Environment variables, first match wins per field: ours, then the official Vespa CLI's data-plane ones, whose
 * plain names hold the PEM text (or the token) and whose `*_FILE` names hold a path, the text winning.
 */
export const securityEnv = {
  ca: ['VESPA_BULK_CA', 'VESPA_CLI_DATA_PLANE_CA_CERT', 'VESPA_CLI_DATA_PLANE_CA_CERT_FILE'],
  cert: ['VESPA_BULK_CERT', 'VESPA_CLI_DATA_PLANE_CERT', 'VESPA_CLI_DATA_PLANE_CERT_FILE'],
  key: ['VESPA_BULK_KEY', 'VESPA_CLI_DATA_PLANE_KEY', 'VESPA_CLI_DATA_PLANE_KEY_FILE'],
  token: ['VESPA_BULK_TOKEN', 'VESPA_CLI_DATA_PLANE_TOKEN'],
} as const;

/** The official CLI's variables that carry PEM text itself, never a file name. */
const pemTextEnv = new Set(['VESPA_CLI_DATA_PLANE_CA_CERT', 'VESPA_CLI_DATA_PLANE_CERT', 'VESPA_CLI_DATA_PLANE_KEY']);

/** Set (to anything but `false` or `0`): do not verify the server's certificate, as the official CLI. */
export const trustAllEnv = 'VESPA_CLI_DATA_PLANE_TRUST_ALL';

/** SecurityOptions from environment variables (see `securityEnv`); empty values count as unset. */
export function securityFromEnv(env: NodeJS.ProcessEnv): SecurityOptions {
  const out: SecurityOptions = {};
  const origin: NonNullable<SecurityOptions['origin']> = {};
  for (const field of ['ca', 'cert', 'key', 'token'] as const) {
    for (const name of securityEnv[field]) {
      const value = env[name];
      if (value === undefined || value === '') continue;
      if (pemTextEnv.has(name) && !isInlinePem(value)) {
        throw new VespaBulkError(
          'VB_USAGE',
          `${name} holds the PEM text itself (-----BEGIN ...); for a file name use ${name}_FILE`,
        );
      }
      out[field] = value;
      // Only PEM text needs naming: a file name names itself.
      if (field !== 'token' && pemTextEnv.has(name)) origin[field] = name;
      break;
    }
  }
  const trustAll = env[trustAllEnv];
  if (trustAll !== undefined && trustAll !== 'false' && trustAll !== '0') out.insecure = true;
  if (Object.keys(origin).length > 0) out.origin = origin;
  return out;
}

const env = (names: readonly string[]): string => `default: $${names[0]}`;

export function withSecurityOptions<T>(y: Argv<T>, group = 'Security:'): Argv<T & SecurityArgs> {
  return y
    .option('ca', {
      type: 'string',
      describe: `CA certificate file (PEM) to trust for https endpoints (${env(securityEnv.ca)})`,
      group,
    })
    .option('cert', {
      type: 'string',
      describe: `Client certificate file (PEM) for mutual TLS (${env(securityEnv.cert)})`,
      group,
    })
    .option('key', { type: 'string', describe: `Private key file (PEM) of --cert (${env(securityEnv.key)})`, group })
    .option('proxy', {
      type: 'string',
      describe:
        'Forward proxy http://[user:password@]host:port (or https://): https:// endpoints and HTTP/2 go through CONNECT tunnels (default: $HTTPS_PROXY, $HTTP_PROXY or $ALL_PROXY unless $NO_PROXY matches, as curl reads them; --no-proxy: none)',
      group: 'Proxy:',
    })
    .option('proxy-ca', {
      type: 'string',
      describe: "CA certificate file (PEM) to trust for an https:// proxy (default: the system's)",
      group: 'Proxy:',
    })
    .option('token', {
      type: 'string',
      describe: `Bearer token sent as 'Authorization: Bearer <token>' (${env(securityEnv.token)}; prefer the variable: flags land in shell history)`,
      group,
    });
}

/**
 * SecurityOptions from parsed flags over the environment. `headers` (from `--header`) are carried along;
 * an Authorization header and --token together are refused, as one would silently override the other.
 */
export function securityFromArgs(
  args: SecurityArgs,
  headers: Record<string, string> = {},
  environment: NodeJS.ProcessEnv = process.env,
): SecurityOptions {
  const fromEnv = securityFromEnv(environment);
  const pick = (flag: string | undefined, fallback: string | undefined): string | undefined =>
    flag !== undefined && flag !== '' ? flag : fallback;
  const security: SecurityOptions = {};
  const ca = pick(args.ca, fromEnv.ca);
  const cert = pick(args.cert, fromEnv.cert);
  const key = pick(args.key, fromEnv.key);
  const token = pick(args.token, fromEnv.token);
  if (ca !== undefined) security.ca = ca;
  if (cert !== undefined) security.cert = cert;
  if (key !== undefined) security.key = key;
  // Which variable a value came from, so messages name it rather than echo PEM text.
  const origin = Object.fromEntries(
    (['ca', 'cert', 'key'] as const)
      .filter((f) => security[f] !== undefined && security[f] === fromEnv[f] && fromEnv.origin?.[f] !== undefined)
      .map((f) => [f, fromEnv.origin![f]]),
  );
  if (Object.keys(origin).length > 0) security.origin = origin;
  if (fromEnv.insecure) security.insecure = true;
  if (token !== undefined) {
    if (/\s/.test(token.trim()) || token.trim() === '')
      throw new VespaBulkError(
        'VB_USAGE',
        '--token must be a single word without spaces (the bare token, without "Bearer")',
      );
    security.token = token.trim();
  }
  if (args.proxy !== undefined) security.proxy = checkedProxy(args.proxy);
  if (args['proxy-ca'] !== undefined && args['proxy-ca'] !== '') security.proxyCa = args['proxy-ca'];
  if (Object.keys(headers).length > 0) {
    if (security.token !== undefined && Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
      throw new VespaBulkError(
        'VB_USAGE',
        "--token and --header 'Authorization: ...' both set the Authorization header; use one",
      );
    }
    security.headers = headers;
  }
  return security;
}

/** `--proxy`, checked now so that a malformed URL is a usage error before anything starts. */
function checkedProxy(value: string | false): ProxySetting {
  if (value === false) return false;
  if (value.trim() === '')
    throw new VespaBulkError('VB_USAGE', '--proxy needs a URL (http://host:port); --no-proxy for none');
  parseProxyUrl(value, '--proxy');
  return value;
}
