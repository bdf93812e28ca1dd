import { secretsOf, securityHeaders, transportSecurity, type SecurityOptions } from '../http/tls.js';
import { type Transport } from '../http/transport.js';
import { createTransport } from '../http/create-transport.js';

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
  /**
   * Send through this transport (`createTransport` for the config server's origin) instead of one of the deploy
   * functions' own, which speak HTTP/1.1 with the TLS material of `security`; it is not closed.
   */
  transport?: Transport;
}

/** A DeployTarget with its defaults applied, as the request functions use it. */
export type ResolvedTarget = Required<Omit<DeployTarget, 'transport' | 'security'>> & {
  /** The caller's transport, else undefined: `configTransport` gives the own one. */
  transport: Transport | undefined;
  security: SecurityOptions | undefined;
  /** Strings to mask in anything shown (token, secret header values). */
  secrets: string[];
};

/** The config server of a local Vespa, used when `configUrl` is not given. */
export const defaultConfigUrl = 'http://localhost:19071';

/**
 * The own transports, by the config server's origin and the security they use: the deploy functions resolve the
 * target once per request, and a deployment's requests share their connections. Idle, they keep no process alive.
 */
const ownTransports = new WeakMap<SecurityOptions, Map<string, Transport>>();
const plain: SecurityOptions = {};

/** The transport the config server's requests go through: the caller's, or an own one. */
export function configTransport(target: ResolvedTarget): Transport {
  if (target.transport !== undefined) return target.transport;
  const security = target.security;
  const key = security ?? plain;
  let byOrigin = ownTransports.get(key);
  if (byOrigin === undefined) ownTransports.set(key, (byOrigin = new Map<string, Transport>()));
  const origin = new URL(target.configUrl).origin;
  let transport = byOrigin.get(origin);
  if (transport === undefined) {
    transport = createTransport({
      origin,
      protocol: 'http1.1',
      connections: 4,
      ...(security !== undefined && transportSecurity(security)),
    });
    byOrigin.set(origin, transport);
  }
  return transport;
}

/** The target with every default filled in. */
export function resolveTarget(target: DeployTarget = {}): ResolvedTarget {
  const security = target.security;
  const headers =
    security === undefined ? (target.headers ?? {}) : { ...(target.headers ?? {}), ...securityHeaders(security) };
  const configUrl = (target.configUrl ?? defaultConfigUrl).replace(/\/+$/, '');
  return {
    configUrl,
    tenant: target.tenant ?? 'default',
    application: target.application ?? 'default',
    environment: target.environment ?? 'prod',
    region: target.region ?? 'default',
    instance: target.instance ?? 'default',
    headers,
    transport: target.transport,
    security,
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
