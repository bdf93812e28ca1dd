/**
 * The CSV encoder's own quoting (src/sinks/csv-write.ts `quoted`) against csv-stringify's synchronous API on the
 * same records (an id, a title, numbers, a JSON text cell with quotes, every tenth title with a comma and a line
 * break), best of three rounds each; printed as a ratio to csv-stringify in the same run.
 *
 *   npx tsx benchmarks/formats/csv-cells.ts [--rows 200000]
 */
import { parseArgs } from 'node:util';
import { stringify } from 'csv-stringify/sync';
import { quoted } from '../../src/sinks/csv-write.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' } } });
const rows = Number(values.rows);
const records = Array.from({ length: rows }, (_, n) => [
  `id:bench:doc::${n}`,
  n % 10 === 0 ? `a title, with\na break ${n}` : `a title ${n}`,
  String(1900 + (n % 120)),
  String(n / 7),
  `{"a":${n},"b":"b${n}"}`,
]);

function own(): string {
  let text = '';
  for (const r of records) text += `${r.map(quoted).join(',')}\n`;
  return text;
}
const library = (): string => stringify(records);

function best(run: () => string): { ms: number; bytes: number } {
  let ms = Infinity;
  let bytes = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    bytes = run().length;
    ms = Math.min(ms, performance.now() - t);
  }
  return { ms, bytes };
}
const lib = best(library);
const mine = best(own);
console.log(`${rows} records of 5 cells; best of 3`);
console.log(`csv-stringify  ${Math.round(rows / (lib.ms / 1000))} rows/s (x1.00), ${lib.bytes} chars`);
console.log(
  `own quoting    ${Math.round(rows / (mine.ms / 1000))} rows/s (x${(lib.ms / mine.ms).toFixed(2)}), ${mine.bytes} chars`,
);
