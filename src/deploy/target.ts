import type { Dispatcher } from 'undici';
import { createSecureDispatcher, secretsOf, securityHeaders, type SecurityOptions } from '../http/tls.js';

/** Which config server and which application the deploy functions address. */
export interface DeployTarget {
  /** Config server base URL. Default http://localhost:19071. */
  configUrl?: string;
  /** Default `default`. */
  tenant?: string;
  /** Default `default`. */
  application?: string;
  /** Default `prod` (a self-hosted Vespa has a single zone, prod.default). */
  environment?: string;
  /** Default `default`. */
  region?: string;
  /** Default `default`. */
  instance?: string;
  /** Extra request headers, e.g. for an authenticating proxy in front of port 19071. */
  headers?: Record<string, string>;
  /**
   * Trust (`ca`), client certificate (`cert`/`key`, mutual TLS) and bearer token for an https config server.
   * Its headers and token are added to `headers` (the token wins over an Authorization header there).
   */
  security?: SecurityOptions;
  /** undici dispatcher; default the global one, or one with the TLS material of `security`. */
  dispatcher?: Dispatcher;
}

/** A DeployTarget with its defaults applied, as the request functions use it. */
export type ResolvedTarget = Required<Omit<DeployTarget, 'dispatcher' | 'security'>> & {
  dispatcher: Dispatcher | undefined;
  /** Strings to mask in anything shown (token, secret header values). */
  secrets: string[];
};

/** The config server of a local Vespa, used when `configUrl` is not given. */
export const defaultConfigUrl = 'http://localhost:19071';

// One dispatcher per SecurityOptions object: the deploy functions resolve the target once per request.
const secureDispatchers = new WeakMap<SecurityOptions, Dispatcher | undefined>();

function dispatcherFor(security: SecurityOptions): Dispatcher | undefined {
  if (!secureDispatchers.has(security)) secureDispatchers.set(security, createSecureDispatcher(security));
  return secureDispatchers.get(security);
}

/** The target with every default filled in and a dispatcher for its TLS material. */
export function resolveTarget(target: DeployTarget = {}): ResolvedTarget {
  const security = target.security;
  const headers = security === undefined ? (target.headers ?? {}) : { ...(target.headers ?? {}), ...securityHeaders(security) };
  return {
    configUrl: (target.configUrl ?? defaultConfigUrl).replace(/\/+$/, ''),
    tenant: target.tenant ?? 'default',
    application: target.application ?? 'default',
    environment: target.environment ?? 'prod',
    region: target.region ?? 'default',
    instance: target.instance ?? 'default',
    headers,
    dispatcher: target.dispatcher ?? (security === undefined ? undefined : dispatcherFor(security)),
    secrets: secretsOf({ ...security, headers }),
  };
}

const seg = encodeURIComponent;

export function tenantPath(t: ResolvedTarget): string {
  return `/application/v2/tenant/${seg(t.tenant)}`;
}

/** The `<app_path>` of the deployment interface. */
export function applicationPath(t: ResolvedTarget): string {
  return `${tenantPath(t)}/application/${seg(t.application)}/environment/${seg(t.environment)}/region/${seg(t.region)}/instance/${seg(t.instance)}`;
}
