import type { ApplicationPackage, ContentCluster } from '../../schema/app-package.js';
import type { SchemaField } from '../../schema/sd-schema.js';

/**
 * What a new package means for the running one, as the config server reports it from prepare: services that
 * need a restart, document types that must be fed again (the stored data no longer fits) and document types
 * that must be reindexed (the data fits, the index does not). Some changes are refused unless a validation
 * override allows them, as in Vespa's validation-overrides.xml.
 */
export interface ComputedChangeActions {
  restart: RestartAction[];
  refeed: RefeedAction[];
  reindex: ReindexAction[];
}

export interface ServiceRef {
  serviceName: string;
  serviceType: string;
  configId: string;
  hostName: string;
}

export interface RestartAction {
  clusterName: string;
  clusterType: string;
  serviceType: string;
  messages: string[];
  services: ServiceRef[];
}

export interface RefeedAction {
  name: string;
  documentType: string;
  clusterName: string;
  messages: string[];
  services: ServiceRef[];
}

export type ReindexAction = RefeedAction;

/** A change that needs a validation override (`id`, e.g. `field-type-change`). */
export interface ValidationFailure {
  id: string;
  message: string;
}

export interface ChangeReport {
  actions: ComputedChangeActions;
  /** Changes not allowed by validation-overrides.xml; prepare fails on them unless told to ignore them. */
  failures: ValidationFailure[];
}

/** Compares the `next` package against the `active` one (none on a first deployment). `today` is YYYY-MM-DD. */
export function compareDeployments(
  active: ApplicationPackage | undefined,
  next: ApplicationPackage,
  today: string,
): ChangeReport {
  const actions: ComputedChangeActions = { restart: [], refeed: [], reindex: [] };
  const needsOverride: ValidationFailure[] = [];
  if (!active) return { actions, failures: [] };

  for (const old of active.contents) {
    const cluster = next.contents.find((c) => c.id === old.id);
    if (!cluster) {
      needsOverride.push({
        id: 'content-cluster-removal',
        message: `Content cluster '${old.id}' is removed. This will cause loss of all data in this cluster`,
      });
      continue;
    }
    for (const doc of old.documents) {
      if (!cluster.documents.some((d) => d.type === doc.type)) {
        needsOverride.push({
          id: 'content-type-removal',
          message: `Schema '${doc.type}' is removed in content cluster '${old.id}'. This will cause loss of all data in this schema`,
        });
      }
    }
  }

  for (const cluster of next.contents) {
    const oldCluster = active.contents.find((c) => c.id === cluster.id);
    if (!oldCluster) continue;
    const restartMessages: string[] = [];
    for (const doc of cluster.documents) {
      const before = oldCluster.documents.find((d) => d.type === doc.type);
      const oldSchema = active.schemas.get(doc.type);
      const newSchema = next.schemas.get(doc.type);
      if (!before || !oldSchema || !newSchema) continue;
      const services = searchnodeRefs(cluster);
      if (before.mode !== doc.mode) {
        needsOverride.push({
          id: 'indexing-mode-change',
          message: `Document type '${doc.type}' in cluster '${cluster.id}' changes indexing mode from '${before.mode}' to '${doc.mode}'`,
        });
      }
      const refeed: string[] = [];
      const reindex: string[] = [];
      for (const field of newSchema.fields.values()) {
        const old = oldSchema.fields.get(field.name);
        if (!old) continue;
        if (old.type !== field.type && field.inDocument)
          refeed.push(`Field '${field.name}' changed: data type: '${old.type}' -> '${field.type}'`);
        else if (indexChanged(old, field))
          reindex.push(`Field '${field.name}' changed: indexing script: '${old.indexing}' -> '${field.indexing}'`);
        else if (old.aspects.includes('attribute') !== field.aspects.includes('attribute')) {
          restartMessages.push(
            `Document type '${doc.type}': Field '${field.name}' changed: ${field.aspects.includes('attribute') ? 'add' : 'remove'} attribute aspect`,
          );
        }
      }
      if (refeed.length > 0) {
        actions.refeed.push({
          name: 'field-type-change',
          documentType: doc.type,
          clusterName: cluster.id,
          messages: refeed,
          services,
        });
        needsOverride.push({ id: 'field-type-change', message: `Document type '${doc.type}': ${refeed.join(', ')}` });
      }
      if (reindex.length > 0)
        actions.reindex.push({
          name: 'indexing-change',
          documentType: doc.type,
          clusterName: cluster.id,
          messages: reindex,
          services,
        });
    }
    if (restartMessages.length > 0) {
      actions.restart.push({
        clusterName: cluster.id,
        clusterType: 'content',
        serviceType: 'searchnode',
        messages: restartMessages,
        services: searchnodeRefs(cluster),
      });
    }
  }

  return { actions, failures: needsOverride.filter((f) => !isAllowed(next, f.id, today)) };
}

/** The index (not only the stored value) is built differently: reindexing rebuilds it from stored data. */
function indexChanged(old: SchemaField, next: SchemaField): boolean {
  const hadIndex = old.aspects.includes('index');
  const hasIndex = next.aspects.includes('index');
  if (hadIndex !== hasIndex) return true;
  return hasIndex && stripAspects(old.indexing) !== stripAspects(next.indexing);
}

const stripAspects = (indexing: string): string =>
  indexing
    .replace(/\b(summary|attribute)\b/g, '')
    .replace(/[\s|]+/g, ' ')
    .trim();

function isAllowed(pkg: ApplicationPackage, id: string, today: string): boolean {
  return pkg.validationOverrides.some((o) => o.id === id && o.until >= today);
}

function searchnodeRefs(cluster: ContentCluster): ServiceRef[] {
  return [
    {
      serviceName: 'searchnode',
      serviceType: 'searchnode',
      configId: `${cluster.id}/search/cluster.${cluster.id}/0`,
      hostName: 'localhost',
    },
  ];
}

/** How a validation failure reads in the prepare error, with the way out, as Vespa words it. */
export function describeValidationFailure(failure: ValidationFailure): string {
  return `${failure.id}: ${failure.message}. To allow this add <allow until='yyyy-mm-dd'>${failure.id}</allow> to validation-overrides.xml, see https://docs.vespa.ai/en/reference/validation-overrides.html`;
}
