import type { ProxySetting } from '../http/proxy/proxy-route.js';
import { compare, type CompareSummary } from '../compare/compare.js';
import { checkCompareOptions, type CompareClusterSide, type CompareOptions } from '../compare/options.js';
import { OptionError } from '../core/options-check.js';
import type { VisitOptions } from '../visit/options.js';
import type { TlsOptions } from '../http/transport.js';

/** What of a migration's options the check reads (MigrateOptions is a superset: named here so the two modules import one way). */
export interface MigratedOptions extends VisitOptions {
  destination: string;
  destinationHeaders?: Record<string, string>;
  feed?: { tls?: TlsOptions; proxy?: ProxySetting; proxyTls?: TlsOptions; transform?: unknown };
}

/** The comparison's own options for `migrate({ verify })`: where its diff goes, how it partitions. */
export type MigrateVerifyOptions = Omit<CompareOptions, 'a' | 'b' | 'signal'>;

/**
 * The check after a migration: the source as visited (its selection, type, cluster) against the destination with
 * the same type and selection. Checked before the migration starts; returns what runs the comparison after it.
 */
export function verifyMigration(options: MigratedOptions, verify: MigrateVerifyOptions): () => Promise<CompareSummary> {
  // A part of the source (a time range, some slices, a resumed run) is compared against the whole destination.
  for (const name of ['fromTimestamp', 'toTimestamp', 'sliceIds', 'resumeFrom'] as const) {
    if (options[name] !== undefined)
      throw new OptionError(
        name,
        'left out with verify (the destination would be compared with part of the source)',
        options[name],
        undefined,
      );
  }
  // A transformed copy differs from its source by design: the comparison would fail every migration that changed something.
  if (options.feed?.transform !== undefined)
    throw new OptionError(
      'verify',
      'left out with a transform (feed.transform, --transform: the destination holds the transformed documents, which differ from the source by design)',
      true,
    );
  const { destination, destinationHeaders, feed, signal, includeRemoves: _removes, ...rest } = options;
  // The migration's own options (onStart, verify) are no visit's.
  const {
    onStart: _onStart,
    verify: _verify,
    ...source
  } = rest as VisitOptions & { onStart?: unknown; verify?: unknown };
  const a: CompareClusterSide = source;
  const b: CompareClusterSide = {
    endpoint: destination,
    ...(destinationHeaders !== undefined && { headers: destinationHeaders }),
    ...(feed?.tls !== undefined && { tls: feed.tls }),
    ...(feed?.proxy !== undefined && { proxy: feed.proxy }),
    ...(feed?.proxyTls !== undefined && { proxyTls: feed.proxyTls }),
    ...(source.protocol !== undefined && { protocol: source.protocol }),
    ...(source.namespace !== undefined && { namespace: source.namespace }),
    ...(source.documentType !== undefined && { documentType: source.documentType }),
    ...(source.selection !== undefined && { selection: source.selection }),
    ...(source.bucketSpace !== undefined && { bucketSpace: source.bucketSpace }),
    ...(source.fieldSet !== undefined && { fieldSet: source.fieldSet }),
    ...(source.slices !== undefined && { slices: source.slices }),
  };
  const compareOptions: CompareOptions = { ...verify, a, b, ...(signal !== undefined && { signal }) };
  checkCompareOptions(compareOptions);
  return () => compare(compareOptions);
}
