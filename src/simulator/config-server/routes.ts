import {
  applicationContent,
  deleteApplication,
  getApplication,
  health,
  listApplications,
  sessionContent,
  statusPage,
} from './applications.js';
import { ConfigServerError } from './deployments.js';
import { reindex, reindexing, restart, serviceConverge } from './operations.js';
import { decodeSegment, type ConfigHandler } from './request.js';
import { activate, createSession, prepare, prepareAndActivate } from './sessions.js';

/**
 * The config server's paths: a path pattern and a handler per method. In a pattern `:name` takes one segment
 * (kept percent-encoded in `params`) and a trailing `*` the segments left, none included (in `rest`). A path
 * that matches a route but not its methods is 405; one that matches none is 404.
 */
export interface Route {
  pattern: string;
  methods: Readonly<Partial<Record<string, ConfigHandler>>>;
}

const tenant = '/application/v2/tenant/:tenant';
const application = `${tenant}/application/:application/environment/:environment/region/:region/instance/:instance`;

export const routes: readonly Route[] = [
  { pattern: '/state/v1/health', methods: { GET: health } },
  { pattern: '/status.html', methods: { GET: statusPage } },
  { pattern: `${tenant}/session`, methods: { POST: createSession } },
  { pattern: `${tenant}/prepareandactivate`, methods: { POST: prepareAndActivate } },
  { pattern: `${tenant}/session/:session/prepared`, methods: { PUT: prepare } },
  { pattern: `${tenant}/session/:session/active`, methods: { PUT: activate } },
  { pattern: `${tenant}/session/:session/content/*`, methods: { GET: sessionContent } },
  { pattern: `${tenant}/application`, methods: { GET: listApplications } },
  { pattern: `${tenant}/application/`, methods: { GET: listApplications } },
  { pattern: application, methods: { GET: getApplication, DELETE: deleteApplication } },
  { pattern: `${application}/`, methods: { GET: getApplication, DELETE: deleteApplication } },
  { pattern: `${application}/serviceconverge`, methods: { GET: serviceConverge } },
  { pattern: `${application}/serviceconverge/:service`, methods: { GET: serviceConverge } },
  { pattern: `${application}/content/*`, methods: { GET: applicationContent } },
  { pattern: `${application}/restart`, methods: { POST: restart } },
  { pattern: `${application}/reindex`, methods: { POST: reindex } },
  { pattern: `${application}/reindexing`, methods: { GET: reindexing } },
];

/** A route matched: its handler for the request's method, and the path's parts. */
export interface Match {
  handler: ConfigHandler;
  params: Record<string, string>;
  rest: string[];
}

interface CompiledRoute {
  segments: string[];
  /** Ends with `*`. */
  open: boolean;
  route: Route;
}

const compiled: CompiledRoute[] = routes.map((route) => {
  const segments = route.pattern.split('/').slice(1);
  const open = segments[segments.length - 1] === '*';
  return { segments: open ? segments.slice(0, -1) : segments, open, route };
});

/**
 * The route for `method` and `path` (raw, without the query): 405 naming the methods the path takes, or 404.
 * A malformed tenant is 400 on any path under it, whatever follows.
 */
export function matchRoute(method: string, path: string): Match {
  const segments = path.split('/').slice(1);
  const underTenant =
    segments[0] === 'application' &&
    segments[1] === 'v2' &&
    segments[2] === 'tenant' &&
    segments[3] !== undefined &&
    segments[3] !== '';
  if (underTenant) decodeSegment(segments[3]);
  for (const { segments: pattern, open, route } of compiled) {
    const params = matchSegments(pattern, open, segments);
    if (params === undefined || params.tenant === '') continue;
    const handler = route.methods[method];
    if (handler === undefined) {
      const allowed = Object.keys(route.methods);
      throw new ConfigServerError(
        405,
        'METHOD_NOT_ALLOWED',
        `Method '${method}' is not supported for '${path}'; use ${allowed.join(' or ')}`,
      );
    }
    return { handler, params, rest: open ? segments.slice(pattern.length) : [] };
  }
  throw new ConfigServerError(404, 'NOT_FOUND', `Nothing at '${path}'`);
}

function matchSegments(pattern: string[], open: boolean, segments: string[]): Record<string, string> | undefined {
  if (open ? segments.length < pattern.length : segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (p.startsWith(':')) params[p.slice(1)] = segments[i];
    else if (p !== segments[i]) return undefined;
  }
  return params;
}
