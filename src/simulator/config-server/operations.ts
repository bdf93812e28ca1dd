import { ConfigServerError } from './deployments.js';
import {
  applicationOf,
  applicationUrl,
  booleanParam,
  decodeSegment,
  listParam,
  ok,
  vespaVersionPattern,
  type ConfigServerRequest,
  type ConfigServerResponse,
} from './request.js';

/** What is done to a live application: convergence of its services, restarts, reindexing. */

/** `serviceconverge`, for all services or (`params.service`) one `host:port`. */
export function serviceConverge(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  const { deployments } = request.server;
  const url = `${applicationUrl(request.base, app)}/serviceconverge`;
  const timeout = request.query.get('timeout');
  if (timeout !== null && !/^\d+(\.\d+)?(ms|s|m)?$/.test(timeout))
    throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid timeout '${timeout}': expected seconds, e.g. 60 or 60s`);
  const version = request.query.get('vespaVersion');
  if (version !== null && !vespaVersionPattern.test(version))
    throw new ConfigServerError(400, 'BAD_REQUEST', `Invalid vespaVersion '${version}'`);
  // Services run the version they were deployed with; asking about another one can never converge.
  const onVersion = version === null || version === app.vespaVersion;
  const generations = app.services.map((_, i) =>
    onVersion ? deployments.serviceGeneration(app, i) : app.previousGeneration,
  );
  const hostPort = request.params.service;
  if (hostPort !== undefined && hostPort !== '') {
    const name = decodeSegment(hostPort);
    const index = app.services.findIndex((s) => `${s.host}:${s.port}` === name);
    if (index === -1) {
      const wanted = app.generation;
      return {
        status: 410,
        json: {
          'error-code': 'NOT_FOUND',
          message: `Service '${name}' is not part of the application`,
          url: `${url}/${name}`,
          host: name,
          wantedGeneration: wanted,
          problem: 'Host:port (service) no longer part of application',
        },
      };
    }
    return ok({
      url: `${url}/${name}`,
      host: name,
      wantedGeneration: app.generation,
      converged: generations[index] === app.generation,
      currentGeneration: generations[index],
    });
  }
  const currentGeneration = Math.min(...generations);
  return ok({
    services: app.services.map((s, i) => ({
      host: s.host,
      port: s.port,
      type: s.type,
      clusterName: s.clusterName,
      url: `${url}/${s.host}:${s.port}`,
      currentGeneration: generations[i],
    })),
    url,
    currentGeneration,
    wantedGeneration: app.generation,
    converged: currentGeneration === app.generation,
  });
}

export function restart(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  request.server.deployments.restart(app, {
    hostname: listParam(request.query, 'hostname'),
    clusterType: listParam(request.query, 'clusterType'),
    clusterId: listParam(request.query, 'clusterId'),
  });
  return ok({ message: 'Success' });
}

export function reindex(request: ConfigServerRequest): ConfigServerResponse {
  const app = applicationOf(request);
  const q = request.query;
  const speedText = q.get('speed');
  const speed = speedText === null ? 1 : Number(speedText);
  if (speedText !== null && (speedText.trim() === '' || !Number.isFinite(speed) || speed < 0 || speed > 100)) {
    throw new ConfigServerError(
      400,
      'BAD_REQUEST',
      `Invalid speed '${speedText}': expected a number from 0.0 to 100.0`,
    );
  }
  const message = request.server.deployments.reindex(app, {
    clusterId: listParam(q, 'clusterId'),
    documentType: listParam(q, 'documentType'),
    indexedOnly: booleanParam(q, 'indexedOnly'),
    speed,
    cause: q.get('cause') ?? undefined,
  });
  return ok({ message });
}

export function reindexing(request: ConfigServerRequest): ConfigServerResponse {
  return ok(request.server.deployments.reindexingStatus(applicationOf(request)));
}
