import type { IncomingHttpHeaders } from 'node:http';
import type { DocumentModel } from '../../schema/document-model.js';
import { ConfigServerError, type Application, type Deployments } from './deployments.js';

/** What every config-server handler works on; one per server. */
export interface ConfigServerState {
  deployments: Deployments;
  /** Largest accepted package body. */
  maxPackageBytes: number;
  /** Told of each activation, and of a deletion that leaves applications live (config-server.ts). */
  onActivate:
    | ((activated: {
        documentTypes: string[];
        generation: number;
        model: DocumentModel;
        contentClusters: { id: string; documents: { type: string; global: boolean }[] }[];
      }) => void)
    | undefined;
  /** Told when the last live application is deleted. */
  onDelete: (() => void) | undefined;
}

/** One request to the config server, as its handlers see it. */
export interface ConfigServerRequest {
  server: ConfigServerState;
  method: string;
  /** The path, still percent-encoded. */
  path: string;
  /** The route's named segments, still percent-encoded (`decodeSegment` decodes one). */
  params: Readonly<Record<string, string>>;
  /** The segments the route's trailing `*` matched, still percent-encoded. */
  rest: string[];
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** `http(s)://host[:port]` as the client addressed the server, for the URLs in answers. */
  base: string;
  /** Reads the whole body: 413 past `server.maxPackageBytes`. */
  body(): Promise<Buffer>;
}

/** A handler's answer: JSON, or a body of its own content type. */
export type ConfigServerResponse =
  | { status: number; json: unknown }
  | { status: number; contentType: string; body: string | Uint8Array };

export type ConfigHandler = (request: ConfigServerRequest) => ConfigServerResponse | Promise<ConfigServerResponse>;

export function ok(json: unknown): ConfigServerResponse {
  return { status: 200, json };
}

export const vespaVersionPattern = /^\d+\.\d+\.\d+(?:\.[A-Za-z0-9_-]+)?$/;

export function applicationUrl(base: string, app: Application): string {
  return `${base}/application/v2/tenant/${app.tenant}/application/${app.name}/environment/prod/region/default/instance/${app.instance}`;
}

export function booleanParam(q: URLSearchParams, name: string): boolean {
  const value = q.get(name);
  if (value === null) return false;
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw new ConfigServerError(
    400,
    'BAD_REQUEST',
    `Invalid value '${value}' for boolean parameter '${name}': use true or false`,
  );
}

export function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const values = q
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return values.length === 0 ? undefined : values;
}

export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ConfigServerError(400, 'BAD_REQUEST', `Malformed percent-encoding in path segment '${segment}'`);
  }
}

/** The request's tenant, decoded (the dispatcher has already refused a malformed one). */
export function tenantOf(request: ConfigServerRequest): string {
  return decodeSegment(request.params.tenant);
}

/** The application the path names. Environment and region are accepted as given: a self-hosted config server has a single zone. */
export function applicationOf(request: ConfigServerRequest): Application {
  return request.server.deployments.application(
    tenantOf(request),
    decodeSegment(request.params.application),
    decodeSegment(request.params.instance),
  );
}
