import { ConfigServerError } from './deployments.js';
import { contentTypeOf, listDirectory, parseContentPath } from './package-content.js';
import { announceDocumentTypes, sessionOf } from './sessions.js';
import {
  applicationOf,
  applicationUrl,
  ok,
  tenantOf,
  type ConfigServerRequest,
  type ConfigServerResponse,
} from './request.js';

/** Applications: the server's health, a tenant's applications, one application (GET, DELETE), and package content. */

export function health(): ConfigServerResponse {
  return ok({ status: { code: 'up' } });
}

export function statusPage(): ConfigServerResponse {
  return { status: 200, contentType: 'text/plain', body: 'OK' };
}

export function listApplications(request: ConfigServerRequest): ConfigServerResponse {
  return ok(request.server.deployments.applicationsOf(tenantOf(request)).map((a) => applicationUrl(request.base, a)));
}

export function getApplication(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  return ok({
    generation: app.generation,
    applicationPackageFileReference: app.pkg.fileReference,
    modelVersions: [app.vespaVersion],
    versions: app.versions,
    url: applicationUrl(request.base, app),
  });
}

export function deleteApplication(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  const { server } = request;
  server.deployments.delete(app);
  // Deleting one of several applications must not open the document interface to every type.
  announceDocumentTypes(server, Math.max(0, ...server.deployments.liveApplications().map((a) => a.generation)));
  return ok({ message: `Application '${app.tenant}.${app.name}.${app.instance}' deleted` });
}

/** A file of a session's package, or a directory listing. */
export function sessionContent(request: ConfigServerRequest): ConfigServerResponse {
  const tenant = tenantOf(request);
  const session = sessionOf(request, tenant);
  return serveContent(
    request,
    session.pkg.files,
    `${request.base}/application/v2/tenant/${tenant}/session/${session.id}/content/`,
  );
}

/** A file of an active application's package, or a directory listing. */
export function applicationContent(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  return serveContent(request, app.pkg.files, `${applicationUrl(request.base, app)}/content/`);
}

function serveContent(
  request: ConfigServerRequest,
  files: Map<string, Uint8Array>,
  contentBase: string,
): ConfigServerResponse {
  const target = parseContentPath(request.rest);
  const file = target.path === '' ? undefined : files.get(target.path);
  if (file && !target.directory) return { status: 200, contentType: contentTypeOf(target.path), body: file };
  const listing = listDirectory(files, target.path, request.query.get('recursive') === 'true');
  if (!listing) {
    const what = file
      ? `'${target.path}' is a file, not a directory: fetch it without the trailing '/'`
      : `No file or directory '${target.path}' in the application package`;
    throw new ConfigServerError(404, 'NOT_FOUND', what);
  }
  return ok(listing.map((p) => contentBase + p.split('/').map(encodeURIComponent).join('/')));
}
