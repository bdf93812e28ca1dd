import {
  readApplicationPackage,
  InvalidPackageError,
  type ApplicationPackage,
  type PackageFormat,
} from '../../schema/app-package.js';
import { compareDeployments, describeValidationFailure, type ComputedChangeActions } from './change-actions.js';
import { servicesOf, simulatedHost, type SimulatedService } from './services.js';

/**
 * The config server's state and its rules, without HTTP: sessions move created → prepared → active, an
 * application is the active session of `tenant.application.instance`, and convergence and reindexing are
 * computed from the clock, so reading them never needs a timer.
 */

/** An error the config server answers as `{"error-code","message"}` with `status`. */
export class ConfigServerError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigServerError';
  }
}

export interface PrepareLogEntry {
  time: number;
  level: 'INFO' | 'WARNING' | 'FINE';
  message: string;
}

export interface PrepareParams {
  applicationName: string;
  instance: string;
  ignoreValidationErrors: boolean;
  dryRun: boolean;
  verbose: boolean;
  /** Target engine version; undefined = the current one. Already checked for format. */
  vespaVersion: string | undefined;
}

export interface DeploymentRules {
  convergeDelayMs: number;
  reindexDurationMs: number;
  /** Known engine versions; the first is the current one. */
  vespaVersions: string[];
  tenants: string[];
  now: () => number;
}

type SessionStatus = 'new' | 'prepared' | 'active' | 'deactivated';

export interface Session {
  id: number;
  tenant: string;
  pkg: ApplicationPackage;
  status: SessionStatus;
  /** Set by prepare. */
  applicationKey?: string;
  applicationName?: string;
  instance?: string;
  vespaVersion?: string;
  /** Active session of the application when this one was prepared: activation is stale if it changed. */
  activeAtPrepare?: number | undefined;
  actions?: ComputedChangeActions;
}

export interface ReindexEntry {
  readyMillis: number;
  speed: number;
  cause: string | undefined;
}

export interface Application {
  tenant: string;
  name: string;
  instance: string;
  sessionId: number;
  generation: number;
  previousGeneration: number;
  activatedAt: number;
  vespaVersion: string;
  versions: { generation: number; engineVersion: string }[];
  pkg: ApplicationPackage;
  services: SimulatedService[];
  /** cluster → document type → last reindexing request. */
  reindexing: Map<string, Map<string, ReindexEntry>>;
}

export interface PrepareOutcome {
  session: Session;
  log: PrepareLogEntry[];
  actions: ComputedChangeActions;
}

export const applicationKey = (tenant: string, name: string, instance: string): string =>
  `${tenant}.${name}.${instance}`;

export class Deployments {
  private nextSessionId = 2;
  private readonly sessions = new Map<number, Session>();
  private readonly applications = new Map<string, Application>();
  /** Highest generation each application key has had, kept across deletion so generations never go back. */
  private readonly generations = new Map<string, number>();

  constructor(private readonly rules: DeploymentRules) {}

  createSession(tenant: string, body: Uint8Array, format: PackageFormat): Session {
    this.requireTenant(tenant);
    let pkg: ApplicationPackage;
    try {
      pkg = readApplicationPackage(body, format);
    } catch (err) {
      if (err instanceof InvalidPackageError)
        throw new ConfigServerError(400, 'INVALID_APPLICATION_PACKAGE', err.message);
      throw err;
    }
    const session: Session = { id: this.nextSessionId++, tenant, pkg, status: 'new' };
    this.sessions.set(session.id, session);
    return session;
  }

  session(tenant: string, id: string): Session {
    this.requireTenant(tenant);
    const session = /^\d+$/.test(id) ? this.sessions.get(Number(id)) : undefined;
    if (!session || session.tenant !== tenant)
      throw new ConfigServerError(404, 'NOT_FOUND', `Session ${id} for tenant '${tenant}' was not found`);
    return session;
  }

  prepare(session: Session, params: PrepareParams): PrepareOutcome {
    if (session.status === 'active')
      throw new ConfigServerError(
        400,
        'BAD_REQUEST',
        `Session ${session.id} is active; a new package needs a new session`,
      );
    if (session.status === 'deactivated')
      throw new ConfigServerError(
        400,
        'BAD_REQUEST',
        `Session ${session.id} was deactivated; upload the package again`,
      );
    const version = params.vespaVersion ?? this.rules.vespaVersions[0];
    if (!this.rules.vespaVersions.includes(version)) {
      throw new ConfigServerError(
        400,
        'UNKNOWN_VESPA_VERSION',
        `Vespa version '${version}' is not known; known versions: ${this.rules.vespaVersions.join(', ')}`,
      );
    }
    const key = applicationKey(session.tenant, params.applicationName, params.instance);
    const active = this.applications.get(key);
    const now = this.rules.now();
    const log: PrepareLogEntry[] = [];
    const say = (level: PrepareLogEntry['level'], message: string): void => {
      if (level !== 'FINE' || params.verbose) log.push({ time: now, level, message });
    };
    const { pkg } = session;
    say('FINE', `Preparing session ${session.id} for application ${key} on Vespa ${version}`);
    say('FINE', `Package files: ${[...pkg.files.keys()].sort().join(', ')}`);
    for (const schema of pkg.schemas.values()) say('FINE', `Schema '${schema.name}': ${schema.fields.size} fields`);
    if (pkg.contents.length === 0)
      say('WARNING', 'services.xml declares no content cluster: there is nowhere to store documents');
    if (!pkg.containers.some((c) => c.documentApi))
      say('WARNING', 'No container cluster has <document-api/>: /document/v1/ will not be served');
    for (const schema of pkg.schemas.values()) {
      if (!pkg.contents.some((c) => c.documents.some((d) => d.type === schema.name))) {
        say('WARNING', `Schema '${schema.name}' is not used by any content cluster; its documents cannot be fed`);
      }
    }

    const report = compareDeployments(active?.pkg, pkg, new Date(now).toISOString().slice(0, 10));
    if (report.failures.length > 0) {
      const text = report.failures.map(describeValidationFailure);
      if (!params.ignoreValidationErrors)
        throw new ConfigServerError(400, 'INVALID_APPLICATION_PACKAGE', `Invalid application: ${text.join('\n')}`);
      for (const t of text) say('WARNING', `Ignoring validation error (ignoreValidationErrors=true): ${t}`);
    }
    const { actions } = report;
    if (actions.restart.length > 0)
      say(
        'WARNING',
        `Change(s) between active and new application that require restart:\n${actions.restart.map((a) => `In cluster '${a.clusterName}' of type '${a.clusterType}': ${a.messages.join('; ')}`).join('\n')}`,
      );
    if (actions.refeed.length > 0)
      say(
        'WARNING',
        `Change(s) between active and new application that may require re-feed:\n${actions.refeed.map((a) => `${a.name}: Document type '${a.documentType}': ${a.messages.join('; ')}`).join('\n')}`,
      );
    if (actions.reindex.length > 0)
      say(
        'WARNING',
        `Change(s) between active and new application that may require re-index:\n${actions.reindex.map((a) => `${a.name}: Document type '${a.documentType}' in cluster '${a.clusterName}': ${a.messages.join('; ')}`).join('\n')}`,
      );

    if (!params.dryRun) {
      session.status = 'prepared';
      session.applicationKey = key;
      session.applicationName = params.applicationName;
      session.instance = params.instance;
      session.vespaVersion = version;
      session.activeAtPrepare = active?.sessionId;
      session.actions = actions;
    }
    return { session, log, actions };
  }

  activate(session: Session, ignoreSessionStaleFailure: boolean): Application {
    if (session.status === 'active')
      throw new ConfigServerError(409, 'ACTIVATION_CONFLICT', `Session ${session.id} is already active`);
    if (session.status !== 'prepared') {
      throw new ConfigServerError(
        400,
        'BAD_REQUEST',
        `Session ${session.id} is not prepared (status ${session.status}); prepare it before activating`,
      );
    }
    const key = session.applicationKey!;
    const current = this.applications.get(key);
    if (current && current.sessionId !== session.activeAtPrepare && !ignoreSessionStaleFailure) {
      throw new ConfigServerError(
        409,
        'ACTIVATION_CONFLICT',
        `Cannot activate session ${session.id} because the currently active session (${current.sessionId}) has changed since session ${session.id} was prepared (was ${session.activeAtPrepare ?? 'none'} then)`,
      );
    }
    if (current) {
      const previous = this.sessions.get(current.sessionId);
      if (previous) previous.status = 'deactivated';
    }
    session.status = 'active';
    // The session id, as in Vespa, except that a stale session forced active (or a redeploy after a delete)
    // must still move the generation forward: clients wait for `wantedGeneration >= the one activated`.
    const generation = Math.max(session.id, (this.generations.get(key) ?? 0) + 1);
    this.generations.set(key, generation);
    const engineVersion = session.vespaVersion!;
    const application: Application = {
      tenant: session.tenant,
      name: session.applicationName!,
      instance: session.instance!,
      sessionId: session.id,
      generation,
      previousGeneration: current?.generation ?? 0,
      activatedAt: this.rules.now(),
      vespaVersion: engineVersion,
      versions: [...(current?.versions ?? []), { generation, engineVersion }],
      pkg: session.pkg,
      services: servicesOf(session.pkg),
      reindexing: current?.reindexing ?? new Map<string, Map<string, ReindexEntry>>(),
    };
    this.applications.set(key, application);
    return application;
  }

  application(tenant: string, name: string, instance: string): Application {
    this.requireTenant(tenant);
    const app = this.applications.get(applicationKey(tenant, name, instance));
    if (!app)
      throw new ConfigServerError(
        404,
        'NOT_FOUND',
        `Application '${applicationKey(tenant, name, instance)}' was not found`,
      );
    return app;
  }

  applicationsOf(tenant: string): Application[] {
    this.requireTenant(tenant);
    return [...this.applications.values()].filter((a) => a.tenant === tenant);
  }

  liveApplications(): Application[] {
    return [...this.applications.values()];
  }

  delete(app: Application): void {
    this.applications.delete(applicationKey(app.tenant, app.name, app.instance));
    const session = this.sessions.get(app.sessionId);
    if (session) session.status = 'deactivated';
  }

  /** Each service reaches the new generation at its own moment within convergeDelayMs of activation. */
  serviceGeneration(app: Application, index: number): number {
    const reachedAt = app.activatedAt + (this.rules.convergeDelayMs * (index + 1)) / app.services.length;
    return this.rules.now() >= reachedAt ? app.generation : app.previousGeneration;
  }

  convergedAt(app: Application): number {
    return app.activatedAt + this.rules.convergeDelayMs;
  }

  restart(
    app: Application,
    filter: { hostname?: string[]; clusterType?: string[]; clusterId?: string[] },
  ): SimulatedService[] {
    for (const t of filter.clusterType ?? []) {
      if (!['admin', 'container', 'content'].includes(t))
        throw new ConfigServerError(400, 'BAD_REQUEST', `Unknown clusterType '${t}'; use admin, container or content`);
    }
    for (const h of filter.hostname ?? []) {
      if (h !== simulatedHost)
        throw new ConfigServerError(
          400,
          'BAD_REQUEST',
          `Host '${h}' is not part of application ${applicationKey(app.tenant, app.name, app.instance)}`,
        );
    }
    const ids = new Set(app.services.map((s) => s.clusterName));
    for (const id of filter.clusterId ?? []) {
      if (!ids.has(id))
        throw new ConfigServerError(
          400,
          'BAD_REQUEST',
          `No cluster '${id}' in application; clusters: ${[...ids].join(', ')}`,
        );
    }
    return app.services.filter(
      (s) =>
        (filter.hostname === undefined || filter.hostname.includes(s.host)) &&
        (filter.clusterType === undefined || filter.clusterType.includes(s.clusterType)) &&
        (filter.clusterId === undefined || filter.clusterId.includes(s.clusterName)),
    );
  }

  /** Marks document types for reindexing; returns the message the API answers. */
  reindex(
    app: Application,
    request: {
      clusterId?: string[];
      documentType?: string[];
      indexedOnly: boolean;
      speed: number;
      cause: string | undefined;
    },
  ): string {
    if (request.documentType && !request.clusterId)
      throw new ConfigServerError(400, 'BAD_REQUEST', 'clusterId is required when documentType is given');
    const clusters = request.clusterId ?? app.pkg.contents.map((c) => c.id);
    const marked: string[] = [];
    for (const id of clusters) {
      const cluster = app.pkg.contents.find((c) => c.id === id);
      if (!cluster)
        throw new ConfigServerError(
          400,
          'BAD_REQUEST',
          `No content cluster '${id}' in application; content clusters: ${app.pkg.contents.map((c) => c.id).join(', ') || 'none'}`,
        );
      for (const type of request.documentType ?? []) {
        if (!cluster.documents.some((d) => d.type === type))
          throw new ConfigServerError(400, 'BAD_REQUEST', `Document type '${type}' is not in content cluster '${id}'`);
      }
      const types = cluster.documents
        .filter((d) => request.documentType === undefined || request.documentType.includes(d.type))
        .filter((d) => !request.indexedOnly || d.mode === 'index')
        .map((d) => d.type);
      if (types.length === 0) continue;
      const entries = app.reindexing.get(id) ?? new Map<string, ReindexEntry>();
      for (const type of types)
        entries.set(type, { readyMillis: this.rules.now(), speed: request.speed, cause: request.cause });
      app.reindexing.set(id, entries);
      marked.push(`[${types.join(', ')}] in '${id}'`);
    }
    const appName = `${app.name}.${app.instance}`;
    return marked.length === 0
      ? `No document types to reindex in application ${appName}`
      : `Reindexing document types ${marked.join(', ')} of application ${appName}`;
  }

  /** Reindexing starts once the config is converged and then takes reindexDurationMs / speed. */
  reindexingStatus(app: Application): object {
    const now = this.rules.now();
    const convergedAt = this.convergedAt(app);
    const clusters: Record<string, { pending: object[]; ready: Record<string, object> }> = {};
    for (const cluster of app.pkg.contents) {
      const pending: object[] = [];
      const ready: Record<string, object> = {};
      for (const [type, entry] of app.reindexing.get(cluster.id) ?? []) {
        const startedMillis = Math.max(entry.readyMillis, convergedAt);
        const base = {
          readyMillis: entry.readyMillis,
          speed: entry.speed,
          ...(entry.cause !== undefined ? { cause: entry.cause } : {}),
        };
        if (now < convergedAt) pending.push({ documentType: type, requiredGeneration: app.generation });
        if (now < startedMillis || entry.speed <= 0) {
          ready[type] = { ...base, state: 'pending', progress: 0 };
          continue;
        }
        const durationMs = this.rules.reindexDurationMs / entry.speed;
        const endedMillis = startedMillis + durationMs;
        ready[type] =
          now >= endedMillis
            ? { ...base, startedMillis, endedMillis: Math.round(endedMillis), state: 'successful', progress: 1.0 }
            : {
                ...base,
                startedMillis,
                state: 'running',
                progress: Math.min(0.999, (now - startedMillis) / durationMs),
              };
      }
      clusters[cluster.id] = { pending, ready };
    }
    return { enabled: true, clusters };
  }

  private requireTenant(tenant: string): void {
    if (!this.rules.tenants.includes(tenant))
      throw new ConfigServerError(404, 'NOT_FOUND', `Tenant '${tenant}' was not found`);
  }
}
