/**
 * Validate throughput: `validate()` against the reader alone (readSources: read, split into operations), and
 * the reader plus operation parsing, on the same corpus in the same run, in this process. The corpus is N
 * operations of the sample application's `music` type (puts of about 300 bytes, one update in ten), written to
 * a temporary JSONL file. Prints operations/s of each and validate's throughput as a ratio to the reader's.
 *   npx tsx benchmarks/validate/run.ts [--operations 500000] [--rounds 3]
 *
 * Target: validate at least 0.5 of "reader + parseOperation", as close to the reader as it gets. Measured on
 * the shared 2-core dev machine (load average about 2), 500k operations, 3 rounds, one run after the other:
 *   before (a JSON tree per operation)        reader 5.21M/s = 1.00, + parseOperation 0.15, validate 0.05 (258k/s)
 *   after (schema/quick-accept.ts on bytes)   reader 5.15M/s = 1.00, + parseOperation 0.14, validate 0.19 (1.00M/s),
 *                                             that is 1.39 of reader + parseOperation
 * The corpus is all accepted: refused operations take the full path (parse, tree, judge), about the old speed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseOperation } from '../../src/document/operation.js';
import { readSources } from '../../src/feed/source.js';
import { validate } from '../../src/validate/validate.js';
import { median, printTable } from '../lib/child.js';

const { values } = parseArgs({
  options: { operations: { type: 'string', default: '500000' }, rounds: { type: 'string', default: '3' } },
});
const operations = Number(values.operations);
const rounds = Number(values.rounds);
const app = fileURLToPath(new URL('../../samples/app', import.meta.url));

function corpusLine(i: number): string {
  const id = `id:mynamespace:music::song-${i}`;
  if (i % 10 === 9)
    return JSON.stringify({ update: id, fields: { popularity: { assign: i % 100 }, genres: { add: ['rock'] } } });
  return JSON.stringify({
    put: id,
    fields: {
      title: `Song number ${i} with a title of ordinary length`,
      artist: `Artist ${i % 997}`,
      year: 1950 + (i % 70),
      duration: 120 + (i % 300),
      genres: ['pop', 'rock', i % 2 ? 'indie' : 'jazz'],
      popularity: (i % 1000) / 10,
      ratings: { fan: i % 5, critic: (i * 7) % 5 },
    },
  });
}

async function readerOnly(file: string, parse: boolean): Promise<number> {
  let n = 0;
  for await (const batch of readSources(file)) {
    for (const item of batch.items) {
      if (parse) parseOperation(item.bytes);
      n++;
    }
  }
  return n;
}

async function timed(run: () => Promise<number>): Promise<number> {
  const start = performance.now();
  const n = await run();
  const seconds = (performance.now() - start) / 1000;
  if (n !== operations) throw new Error(`expected ${operations} operations, got ${n}`);
  return n / seconds;
}

const dir = mkdtempSync(join(tmpdir(), 'vb-bench-validate-'));
try {
  const file = join(dir, 'corpus.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < operations; i++) lines.push(corpusLine(i));
  writeFileSync(file, `${lines.join('\n')}\n`);
  const reader: number[] = [];
  const parsed: number[] = [];
  const validated: number[] = [];
  for (let r = 0; r < rounds; r++) {
    reader.push(await timed(() => readerOnly(file, false)));
    parsed.push(await timed(() => readerOnly(file, true)));
    validated.push(
      await timed(async () => {
        const outcome = await validate(file, { app });
        if (outcome.summary['validator.error.count'] !== 0) throw new Error('the benchmark corpus should be valid');
        return outcome.summary['validator.operation.count'];
      }),
    );
  }
  const base = median(reader);
  const row = (run: string, rates: number[]) => ({
    run,
    'operations/s (median)': Math.round(median(rates)),
    'ratio to reader': (median(rates) / base).toFixed(2),
  });
  printTable(`validate: ${operations} operations, ${rounds} rounds`, [
    row('reader (read + split)', reader),
    row('reader + parseOperation', parsed),
    row('validate', validated),
  ]);
  const toParsed = median(validated) / median(parsed);
  process.stdout.write(
    `validate / (reader + parseOperation): ${toParsed.toFixed(2)} (target >= 0.5: ${toParsed >= 0.5 ? 'met' : 'NOT met'})\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
