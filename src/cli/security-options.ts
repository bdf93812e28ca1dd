import type { Argv } from 'yargs';
import { VespaBulkError } from '../errors.js';
import { securityEnv, securityFromEnv, type SecurityOptions } from '../http/tls.js';

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
}

const env = (names: readonly string[]): string => `default: $${names[0]}`;

export function withSecurityOptions<T>(y: Argv<T>, group = 'Security:'): Argv<T & SecurityArgs> {
  return y
    .option('ca', { type: 'string', describe: `CA certificate file (PEM) to trust for https endpoints (${env(securityEnv.ca)})`, group })
    .option('cert', { type: 'string', describe: `Client certificate file (PEM) for mutual TLS (${env(securityEnv.cert)})`, group })
    .option('key', { type: 'string', describe: `Private key file (PEM) of --cert (${env(securityEnv.key)})`, group })
    .option('token', { type: 'string', describe: `Bearer token sent as 'Authorization: Bearer <token>' (${env(securityEnv.token)}; prefer the variable: flags land in shell history)`, group });
}

/**
 * SecurityOptions from parsed flags over the environment. `headers` (from `--header`) are carried along;
 * an Authorization header and --token together are refused, as one would silently override the other.
 */
export function securityFromArgs(args: SecurityArgs, headers: Record<string, string> = {}, environment: NodeJS.ProcessEnv = process.env): SecurityOptions {
  const fromEnv = securityFromEnv(environment);
  const pick = (flag: string | undefined, fallback: string | undefined): string | undefined => (flag !== undefined && flag !== '' ? flag : fallback);
  const security: SecurityOptions = {};
  const ca = pick(args.ca, fromEnv.ca);
  const cert = pick(args.cert, fromEnv.cert);
  const key = pick(args.key, fromEnv.key);
  const token = pick(args.token, fromEnv.token);
  if (ca !== undefined) security.ca = ca;
  if (cert !== undefined) security.cert = cert;
  if (key !== undefined) security.key = key;
  // Which variable a value came from, so messages name it rather than echo PEM text.
  const origin = Object.fromEntries((['ca', 'cert', 'key'] as const).filter((f) => security[f] !== undefined && security[f] === fromEnv[f] && fromEnv.origin?.[f] !== undefined).map((f) => [f, fromEnv.origin![f]]));
  if (Object.keys(origin).length > 0) security.origin = origin;
  if (fromEnv.insecure) security.insecure = true;
  if (token !== undefined) {
    if (/\s/.test(token.trim()) || token.trim() === '') throw new VespaBulkError('VB_USAGE', '--token must be a single word without spaces (the bare token, without "Bearer")');
    security.token = token.trim();
  }
  if (Object.keys(headers).length > 0) {
    if (security.token !== undefined && Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
      throw new VespaBulkError('VB_USAGE', "--token and --header 'Authorization: ...' both set the Authorization header; use one");
    }
    security.headers = headers;
  }
  return security;
}
