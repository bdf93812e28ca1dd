import type {
  ApplicationStatus,
  ChangeAction,
  ConfigChangeActions,
  ConvergenceResult,
  LogEntry,
  ReindexingStatus,
} from '../deploy/types.js';

/** Human-readable renderings of deployment results, kept pure so the CLI stays a thin shell. */

export function formatLog(log: LogEntry[]): string[] {
  return log.map((entry) => {
    const [first, ...rest] = entry.message.split('\n');
    return [`${entry.level.padEnd(7)} ${first}`, ...rest.map((line) => `        ${line}`)].join('\n');
  });
}

const describeServices = (a: ChangeAction): string => {
  const names = [
    ...new Set((a.services ?? []).map((s) => `${s.serviceName ?? s.serviceType ?? '?'}@${s.hostName ?? '?'}`)),
  ];
  return names.length > 0 ? ` [${names.join(', ')}]` : '';
};

/**
 * The config change actions a deployment implies, with what to do about each kind; an empty list when there
 * are none. These are the lines a user must not miss: a refeed or reindex left undone serves stale data.
 */
export function formatChangeActions(actions: ConfigChangeActions): string[] {
  const lines: string[] = [];
  for (const a of actions.restart) {
    lines.push(
      `restart  ${a.clusterType ?? 'cluster'} '${a.clusterName ?? '?'}' ${a.serviceType ?? ''}${describeServices(a)}: ${(a.messages ?? []).join('; ')}`,
    );
  }
  for (const a of actions.refeed) {
    lines.push(
      `refeed   ${a.documentType ?? '?'} in '${a.clusterName ?? '?'}' (${a.name ?? 'change'}): ${(a.messages ?? []).join('; ')}`,
    );
  }
  for (const a of actions.reindex) {
    lines.push(
      `reindex  ${a.documentType ?? '?'} in '${a.clusterName ?? '?'}' (${a.name ?? 'change'}): ${(a.messages ?? []).join('; ')}`,
    );
  }
  if (actions.restart.length > 0) {
    const clusters = [
      ...new Set(actions.restart.map((a) => a.clusterName).filter((c): c is string => c !== undefined)),
    ];
    lines.push(`To restart: vespa-bulk deploy restart --cluster-id ${clusters.join(',')}`);
  }
  if (actions.refeed.length > 0) {
    lines.push(
      `To refeed: feed every document of type ${[...new Set(actions.refeed.map((a) => a.documentType))].join(', ')} again (the stored data no longer fits the schema)`,
    );
  }
  for (const [cluster, types] of groupByCluster(actions.reindex)) {
    lines.push(`To reindex: vespa-bulk deploy reindex --cluster ${cluster} --document-type ${types.join(',')}`);
  }
  return lines;
}

function groupByCluster(actions: ChangeAction[]): Map<string, string[]> {
  const byCluster = new Map<string, string[]>();
  for (const a of actions) {
    const list = byCluster.get(a.clusterName ?? '?') ?? [];
    if (a.documentType && !list.includes(a.documentType)) list.push(a.documentType);
    byCluster.set(a.clusterName ?? '?', list);
  }
  return byCluster;
}

export function formatApplicationStatus(name: string, status: ApplicationStatus): string[] {
  const versions = status.versions ?? [];
  const engine = status.modelVersions?.join(', ') ?? versions[versions.length - 1]?.engineVersion ?? 'unknown';
  const lines = [
    `Application ${name}: generation ${status.generation}, Vespa ${engine}, package ${status.applicationPackageFileReference}`,
  ];
  if (versions.length > 0)
    lines.push(`Deployed generations: ${versions.map((v) => `${v.generation} (${v.engineVersion})`).join(', ')}`);
  return lines;
}

export function formatConvergence(result: ConvergenceResult): string[] {
  const head = result.converged
    ? `Converged: all services run generation ${result.wantedGeneration}`
    : `Not converged: wanted generation ${result.wantedGeneration}, lowest current ${result.currentGeneration}`;
  return [
    head,
    ...(result.services ?? []).map(
      (s) =>
        `  ${s.currentGeneration === result.wantedGeneration ? 'ok     ' : 'waiting'} ${`${s.host}:${s.port}`.padEnd(22)} ${s.type.padEnd(28)} ${(s.clusterName ?? '').padEnd(20)} generation ${s.currentGeneration}`,
    ),
  ];
}

export function formatReindexing(status: ReindexingStatus): string[] {
  const lines: string[] = [];
  for (const [cluster, { ready }] of Object.entries(status.clusters ?? {})) {
    const types = Object.entries(ready ?? {});
    if (types.length === 0) lines.push(`${cluster}: no reindexing requested`);
    for (const [type, r] of types) {
      const progress = r.progress !== undefined ? ` ${(r.progress * 100).toFixed(1)}%` : '';
      const times = [
        r.startedMillis !== undefined ? `started ${new Date(r.startedMillis).toISOString()}` : undefined,
        r.endedMillis !== undefined ? `ended ${new Date(r.endedMillis).toISOString()}` : undefined,
      ].filter(Boolean);
      lines.push(
        `${cluster}/${type}: ${r.state ?? 'unknown'}${progress}${times.length > 0 ? ` (${times.join(', ')})` : ''}${r.cause ? ` cause: ${r.cause}` : ''}`,
      );
    }
  }
  if (status.enabled === false) lines.unshift('Reindexing is disabled on this config server');
  return lines;
}

/** A content listing URL as a path relative to the package root. */
export function contentUrlToPath(url: string): string {
  const at = url.indexOf('/content/');
  const tail = at === -1 ? url : url.slice(at + '/content/'.length);
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}
