import { VespaBulkError } from '../core/errors.js';

/**
 * What an input holds. `jsonl` and `json` are read alike (the splitter tells JSONL, a JSON array and
 * whitespace-separated objects apart); `csv`, `tsv` and `parquet` are tables whose rows become operations.
 */
export type InputFormat = 'jsonl' | 'json' | 'csv' | 'tsv' | 'parquet';

/** The input formats, as `--input-format` takes them. */
export const inputFormats: readonly InputFormat[] = ['jsonl', 'json', 'csv', 'tsv', 'parquet'];

/** A table format: its rows become operations. */
export type TableFormat = 'csv' | 'tsv' | 'parquet';

/**
 * The table format of an input: `given` when given, else by the name's extension after a `.gz` or `.zst`
 * (and, for a URL, in its path): `.csv`, `.tsv` (or `.tab`), `.parquet` (or `.pq`). Undefined: JSON or JSONL.
 */
export function tableFormatOf(name: string, given?: InputFormat): TableFormat | undefined {
  if (given !== undefined) return given === 'csv' || given === 'tsv' || given === 'parquet' ? given : undefined;
  let path = name;
  if (/^https?:\/\//i.test(name)) {
    try {
      path = new URL(name).pathname;
    } catch {
      return undefined;
    }
  }
  path = path.toLowerCase().replace(/\.(gz|zst)$/, '');
  if (path.endsWith('.csv')) return 'csv';
  if (path.endsWith('.tsv') || path.endsWith('.tab')) return 'tsv';
  if (path.endsWith('.parquet') || path.endsWith('.pq')) return 'parquet';
  return undefined;
}

/** Refuses an input format that is not one of `inputFormats` (VB_USAGE). */
export function checkInputFormat(format: unknown): void {
  if (format !== undefined && !inputFormats.includes(format as InputFormat))
    throw new VespaBulkError(
      'VB_USAGE',
      `input format must be one of ${inputFormats.join(', ')}, not ${JSON.stringify(format)}`,
    );
}
