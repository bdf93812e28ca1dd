import type { ParquetWriter } from 'hyparquet-writer';
import { writeColumn } from 'hyparquet-writer/src/column.js';
import { encodeNestedValues } from 'hyparquet-writer/src/dremel.js';
import { schemaPathResolver } from 'hyparquet-writer/src/schema.js';
import type { Column } from './column-types.js';

/**
 * One row group written through hyparquet-writer's column writer, as `ParquetWriter.write` does, except that a
 * dense tensor column's definition and repetition levels are laid out here in one pass: the writer's generic
 * (Dremel) encoder makes a recursive call per cell, which was about half of the time of an export of 384-float
 * embeddings (benchmarks/formats/parquet-writers.ts). The levels are the ones the generic encoder gives.
 */
export function writeRowGroup(
  pw: ParquetWriter,
  columns: readonly Column[],
  data: readonly unknown[][],
  rows: number,
): void {
  const resolve = schemaPathResolver(pw.schema);
  const start = pw.writer.offset;
  const chunks: ReturnType<typeof writeColumn>['chunk'][] = [];
  for (let j = 0; j < columns.length; j++) {
    const c = columns[j];
    for (const leafPath of leavesOf(resolve([c.name]))) {
      const schemaPath = leafPath.map((n) => n.element);
      const pageData =
        c.type.kind === 'vector' ? vectorLevels(data[j]) : encodeNestedValues(leafPath, data[j] as never);
      const result = writeColumn({
        writer: pw.writer,
        column: {
          columnName: schemaPath
            .slice(1)
            .map((s) => s.name)
            .join('.'),
          element: schemaPath[schemaPath.length - 1],
          schemaPath,
          codec: pw.codec,
          compressors: pw.compressors,
          // A dense tensor's min/max statistics help no reader and cost a pass over every cell.
          stats: pw.statistics && c.type.kind !== 'vector',
          ...(pw.statisticsTruncateLength !== undefined && { statisticsTruncateLength: pw.statisticsTruncateLength }),
          pageSize: 1 << 20,
          columnIndex: false,
          offsetIndex: true,
        },
        pageData,
      });
      chunks.push(result.chunk);
      pw.pendingIndexes.push(result);
    }
  }
  let totalByteSize = 0n;
  for (const { meta_data } of chunks) totalByteSize += meta_data?.total_uncompressed_size ?? 0n;
  pw.num_rows += BigInt(rows);
  pw.row_groups.push({
    columns: chunks,
    total_byte_size: totalByteSize,
    num_rows: BigInt(rows),
    total_compressed_size: BigInt(pw.writer.offset - start),
  });
}

type SchemaTree = ReturnType<ReturnType<typeof schemaPathResolver>>[number];

/** Every path from the column down to a primitive leaf. */
function leavesOf(path: SchemaTree[]): SchemaTree[][] {
  const node = path[path.length - 1];
  if (node.children.length === 0) return [path];
  return node.children.flatMap((child) => leavesOf([...path, child]));
}

/**
 * Levels of an OPTIONAL LIST of OPTIONAL cells (max definition level 3): a null list 0, an empty one 1, a null
 * cell 2, a cell 3; repetition 0 at each row's first slot, 1 after.
 */
function vectorLevels(rows: readonly unknown[]): {
  values: unknown[];
  definitionLevels: number[];
  repetitionLevels: number[];
  maxDefinitionLevel: number;
} {
  let total = 0;
  for (const r of rows) total += r === null || r === undefined ? 1 : Math.max((r as unknown[]).length, 1);
  const values = new Array<unknown>(total);
  const definitionLevels = new Array<number>(total);
  const repetitionLevels = new Array<number>(total);
  let k = 0;
  for (const r of rows) {
    const cells = r as number[] | null | undefined;
    if (cells === null || cells === undefined || cells.length === 0) {
      values[k] = undefined;
      definitionLevels[k] = cells === null || cells === undefined ? 0 : 1;
      repetitionLevels[k++] = 0;
      continue;
    }
    for (let i = 0; i < cells.length; i++) {
      const v = cells[i];
      values[k] = v;
      definitionLevels[k] = v === null || v === undefined ? 2 : 3;
      repetitionLevels[k++] = i === 0 ? 0 : 1;
    }
  }
  return { values, definitionLevels, repetitionLevels, maxDefinitionLevel: 3 };
}
