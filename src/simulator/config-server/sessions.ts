import { servedDocumentTypes, type ContentCluster, type PackageFormat } from '../../schema/app-package.js';
import { documentModelOf, type DocumentModel } from '../../schema/document-model.js';
import { ConfigServerError, type Application, type PrepareOutcome, type Session } from './deployments.js';
import {
  applicationUrl,
  booleanParam,
  decodeSegment,
  ok,
  tenantOf,
  vespaVersionPattern,
  type ConfigServerRequest,
  type ConfigServerResponse,
  type ConfigServerState,
} from './request.js';

/** Sessions: upload a package (POST session), prepare it (PUT prepared), activate it (PUT active), or all at once (POST prepareandactivate). */

export async function createSession(request: ConfigServerRequest): Promise<ConfigServerResponse> {
  const tenant = tenantOf(request);
  const session = await uploadSession(request, tenant);
  const sessionUrl = `${request.base}/application/v2/tenant/${tenant}/session/${session.id}`;
  return ok({
    log: [],
    tenant,
    'session-id': String(session.id),
    prepared: `${sessionUrl}/prepared`,
    content: `${sessionUrl}/content/`,
    message: `Session ${session.id} for tenant '${tenant}' created.`,
  });
}

export function prepare(request: ConfigServerRequest): ConfigServerResponse {
  const tenant = tenantOf(request);
  const session = sessionOf(request, tenant);
  const { log, actions } = prepareSession(request, session);
  const dry = booleanParam(request.query, 'dryRun');
  return ok({
    log,
    tenant,
    'session-id': String(session.id),
    activate: `${request.base}/application/v2/tenant/${tenant}/session/${session.id}/active`,
    message: `Session ${session.id} for tenant '${tenant}' prepared${dry ? ' (dry run: nothing was changed)' : ''}.`,
    configChangeActions: actions,
  });
}

export function activate(request: ConfigServerRequest): ConfigServerResponse {
  const tenant = tenantOf(request);
  const session = sessionOf(request, tenant);
  const app = activateSession(request.server, session, booleanParam(request.query, 'ignoreSessionStaleFailure'));
  return ok({
    tenant,
    'session-id': String(session.id),
    message: `Session ${session.id} for tenant '${tenant}' activated.`,
    url: applicationUrl(request.base, app),
    application: {
      id: `${app.tenant}:${app.name}:${app.instance}`,
      checksum: app.pkg.fileReference,
      generation: app.generation,
      previousActiveGeneration: app.previousGeneration,
    },
  });
}

export async function prepareAndActivate(request: ConfigServerRequest): Promise<ConfigServerResponse> {
  const tenant = tenantOf(request);
  const session = await uploadSession(request, tenant);
  const { log, actions } = prepareSession(request, session);
  const dry = booleanParam(request.query, 'dryRun');
  const app = dry
    ? undefined
    : activateSession(request.server, session, booleanParam(request.query, 'ignoreSessionStaleFailure'));
  const name = request.query.get('applicationName') || 'default';
  const instance = request.query.get('instance') || 'default';
  return ok({
    log,
    tenant,
    url: app
      ? applicationUrl(request.base, app)
      : `${request.base}/application/v2/tenant/${tenant}/application/${name}/environment/prod/region/default/instance/${instance}`,
    'session-id': String(session.id),
    message: `Session ${session.id} for tenant '${tenant}' prepared${app ? ' and activated' : ' (dry run: not activated)'}.`,
    activated: app !== undefined,
    configChangeActions: actions,
  });
}

/** The session the path names. */
export function sessionOf(request: ConfigServerRequest, tenant: string): Session {
  return request.server.deployments.session(tenant, decodeSegment(request.params.session));
}

/**
 * Tells the document interface what the live applications serve: their document types, models and content
 * clusters, or that none is left.
 */
export function announceDocumentTypes(server: ConfigServerState, generation: number): void {
  const live = server.deployments.liveApplications();
  if (live.length === 0) {
    server.onDelete?.();
    return;
  }
  const documentTypes = [...new Set(live.flatMap((a) => servedDocumentTypes(a.pkg)))];
  const models = live.map((a) => documentModelOf(a.pkg));
  const model: DocumentModel = {
    types: new Map(models.flatMap((m) => [...m.types])),
    ignoreUndefinedFields: models.some((m) => m.ignoreUndefinedFields),
    documentApi: models.some((m) => m.documentApi),
  };
  const contentClusters = new Map<string, ContentCluster>();
  for (const c of live.flatMap((a) => a.pkg.contents)) if (!contentClusters.has(c.id)) contentClusters.set(c.id, c);
  server.onActivate?.({ documentTypes, generation, model, contentClusters: [...contentClusters.values()] });
}

async function uploadSession(request: ConfigServerRequest, tenant: string): Promise<Session> {
  const format = packageFormat(request.headers['content-type']);
  const body = await request.body();
  const { deployments } = request.server;
  return deployments.session(tenant, String(deployments.createSession(tenant, body, format).id));
}

function prepareSession(request: ConfigServerRequest, session: Session): PrepareOutcome {
  const q = request.query;
  const version = q.get('vespaVersion') ?? undefined;
  if (version !== undefined && !vespaVersionPattern.test(version)) {
    throw new ConfigServerError(
      400,
      'BAD_REQUEST',
      `Invalid vespaVersion '${version}': expected <major>.<minor>.<micro>, e.g. 8.600.35`,
    );
  }
  const timeout = q.get('timeout');
  if (timeout !== null && !(Number(timeout) > 0))
    throw new ConfigServerError(
      400,
      'BAD_REQUEST',
      `Invalid timeout '${timeout}': expected a positive number of seconds`,
    );
  return request.server.deployments.prepare(session, {
    applicationName: q.get('applicationName') || 'default',
    instance: q.get('instance') || 'default',
    ignoreValidationErrors: booleanParam(q, 'ignoreValidationErrors'),
    dryRun: booleanParam(q, 'dryRun'),
    verbose: booleanParam(q, 'verbose'),
    vespaVersion: version,
  });
}

function activateSession(server: ConfigServerState, session: Session, ignoreStale: boolean): Application {
  const app = server.deployments.activate(session, ignoreStale);
  announceDocumentTypes(server, app.generation);
  return app;
}

function packageFormat(contentType: string | undefined): PackageFormat {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/zip') return 'zip';
  if (type === 'application/x-gzip' || type === 'application/gzip') return 'gzip';
  throw new ConfigServerError(
    400,
    'BAD_REQUEST',
    `Unsupported Content-Type '${contentType ?? ''}': send the package as application/zip or application/x-gzip`,
  );
}
