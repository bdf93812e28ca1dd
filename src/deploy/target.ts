import type { Dispatcher } from 'undici';

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
  /** undici dispatcher; default the global one. */
  dispatcher?: Dispatcher;
}

export type ResolvedTarget = Required<Omit<DeployTarget, 'dispatcher'>> & { dispatcher: Dispatcher | undefined };

export const defaultConfigUrl = 'http://localhost:19071';

export function resolveTarget(target: DeployTarget = {}): ResolvedTarget {
  return {
    configUrl: (target.configUrl ?? defaultConfigUrl).replace(/\/+$/, ''),
    tenant: target.tenant ?? 'default',
    application: target.application ?? 'default',
    environment: target.environment ?? 'prod',
    region: target.region ?? 'default',
    instance: target.instance ?? 'default',
    headers: target.headers ?? {},
    dispatcher: target.dispatcher,
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
