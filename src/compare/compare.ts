import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VespaBulkError } from '../core/errors.js';
import { DiffWriter } from './diff-writer.js';
import { checkCompareOptions, defaultComparePartitions, type CompareOptions, type CompareProgress } from './options.js';
import { readSide, type SideRead } from './sides.js';
import { SpillWriter, readPartition } from './spill.js';
import { differingFields } from './values.js';

/** One side in the result. */
export interface CompareSideSummary {
  /** The endpoint, or the files and directories as given. */
  source: string;
  /** Documents on this side (distinct ids; for an export, what is left after its later puts and removes). */
  documents: number;
}

/** The counts of one document type. */
export interface TypeComparison {
  /** Documents of the type in `a`. */
  a: number;
  /** Documents of the type in `b`. */
  b: number;
  onlyInA: number;
  onlyInB: number;
  /** Documents in both whose fields differ. */
  differing: number;
}

/** What `compare()` found. */
export interface CompareSummary {
  /** Both sides hold the same documents with the same field values. */
  equal: boolean;
  a: CompareSideSummary;
  b: CompareSideSummary;
  /** Ids only side `a` holds. */
  onlyInA: number;
  /** Ids only side `b` holds. */
  onlyInB: number;
  /** Documents both hold, with a field that differs. */
  differing: number;
  /** Documents both hold with the same fields. */
  same: number;
  /** The counts per document type (from the ids), by type name. */
  types: Record<string, TypeComparison>;
  /** A few ids of each kind of difference (see `examples`); the diff file has them all. */
  examples: { onlyInA: string[]; onlyInB: string[]; differing: string[] };
  /** The diff file, when one was asked for. */
  diffFile?: string;
  /** Wall time of the comparison. */
  seconds: number;
}

/**
 * Compares two corpora, each a cluster or an export (see {@link CompareOptions}), by meaning: the ids each holds,
 * and the fields of the documents both hold, value by value (numbers by value, tensors by cells, maps and
 * weighted sets in any order, arrays in order).
 *
 * Both sides are read at once, a cluster visited sliced and in parallel with the visitor's guarantees. Each
 * document goes, as read, into one of `partitions` spill files of its side by a hash of its id; the parts are
 * then compared one at a time, so memory holds one part of each side however large the corpora. Documents whose
 * bytes are the same are equal without being parsed; only the others are read value by value.
 *
 * Rejects with the visit's error (`VB_VISIT`) when a side could not be read whole: a comparison of part of a
 * corpus would report documents missing that are not.
 * @example
 * ```ts
 * import { compare } from 'vespa-bulk';
 *
 * const summary = await compare({
 *   a: { endpoint: 'http://old-cluster:8080', cluster: 'content' },
 *   b: { files: 'music-export.jsonl.gz' },
 *   diff: 'differences.jsonl',
 * });
 * console.log(summary.equal, summary.onlyInA, summary.onlyInB, summary.differing);
 * ```
 */
export async function compare(options: CompareOptions): Promise<CompareSummary> {
  checkCompareOptions(options);
  const started = performance.now();
  const partitions = options.partitions ?? defaultComparePartitions;
  const exampleCount = options.examples ?? 10;
  const controller = new AbortController();
  const signal =
    options.signal === undefined ? controller.signal : AbortSignal.any([options.signal, controller.signal]);
  const dir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'vespa-bulk-compare-'));
  const progress: CompareProgress = { phase: 'reading', read: { a: 0, b: 0 }, compared: 0, partitions };
  const tell = (): void => options.onProgress?.({ ...progress, read: { ...progress.read } });
  let diff: DiffWriter | undefined;
  let firstFailure: { error: unknown } | undefined;
  try {
    // Settled both before going on: a side that failed stops the other, whose files must be closed before they are removed.
    const settled = await Promise.allSettled(
      (['a', 'b'] as const).map(async (name): Promise<SideRead> => {
        const spill = new SpillWriter(dir, name, partitions);
        try {
          const read = await readSide(
            options[name],
            (id, fields) => {
              if (++progress.read[name] % 10_000 === 0) tell();
              return spill.add(id, fields);
            },
            signal,
          );
          await spill.close();
          return read;
        } catch (err) {
          firstFailure ??= { error: err };
          // The other side has no use going on.
          controller.abort();
          await spill.destroy();
          throw err;
        }
      }),
    );
    // The error of the side that failed first, not the abort it caused in the other.
    if (firstFailure !== undefined) throw firstFailure.error;
    // A stopped visit ends quietly with what it had: compared, it would show documents missing that are not.
    throwIfStopped(signal);
    const reads = settled.map((s) => (s as PromiseFulfilledResult<SideRead>).value);
    progress.phase = 'comparing';
    tell();
    diff = options.diff === undefined ? undefined : new DiffWriter(options.diff);
    const summary: CompareSummary = {
      equal: false,
      a: { source: reads[0].source, documents: 0 },
      b: { source: reads[1].source, documents: 0 },
      onlyInA: 0,
      onlyInB: 0,
      differing: 0,
      same: 0,
      types: {},
      examples: { onlyInA: [], onlyInB: [], differing: [] },
      seconds: 0,
    };
    const typeOf = (id: string): TypeComparison => {
      const name = documentTypeOf(id);
      return (summary.types[name] ??= { a: 0, b: 0, onlyInA: 0, onlyInB: 0, differing: 0 });
    };
    const example = (kind: keyof CompareSummary['examples'], id: string): void => {
      if (summary.examples[kind].length < exampleCount) summary.examples[kind].push(id);
    };
    for (let p = 0; p < partitions; p++) {
      throwIfStopped(signal);
      const [inA, inB] = await Promise.all([readPartition(dir, 'a', p), readPartition(dir, 'b', p)]);
      for (const id of [...inA.keys()].sort()) {
        const type = typeOf(id);
        type.a++;
        const fa = inA.get(id)!;
        const fb = inB.get(id);
        if (fb === undefined) {
          type.onlyInA++;
          summary.onlyInA++;
          example('onlyInA', id);
          await diff?.only(id, 'a');
          continue;
        }
        type.b++;
        const differences = fa.equals(fb) ? [] : differingFields(fa.toString('utf8'), fb.toString('utf8'));
        if (differences.length === 0) {
          summary.same++;
          continue;
        }
        type.differing++;
        summary.differing++;
        example('differing', id);
        await diff?.fields(id, differences);
      }
      for (const id of [...inB.keys()].filter((k) => !inA.has(k)).sort()) {
        const type = typeOf(id);
        type.b++;
        type.onlyInB++;
        summary.onlyInB++;
        example('onlyInB', id);
        await diff?.only(id, 'b');
      }
      progress.compared = p + 1;
      tell();
    }
    await diff?.close();
    for (const t of Object.values(summary.types)) {
      summary.a.documents += t.a;
      summary.b.documents += t.b;
    }
    summary.equal = summary.onlyInA === 0 && summary.onlyInB === 0 && summary.differing === 0;
    if (options.diff !== undefined) summary.diffFile = options.diff;
    summary.seconds = (performance.now() - started) / 1000;
    return summary;
  } catch (err) {
    diff?.destroy();
    throw err;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function throwIfStopped(signal: AbortSignal): void {
  if (signal.aborted) throw new VespaBulkError('VB_ABORTED', 'the comparison was stopped');
}

/** The document type an id names (`id:<namespace>:<type>:...`). */
export function documentTypeOf(id: string): string {
  const c1 = id.indexOf(':', 3);
  const c2 = id.indexOf(':', c1 + 1);
  return c1 < 0 || c2 < 0 ? '' : id.slice(c1 + 1, c2);
}
