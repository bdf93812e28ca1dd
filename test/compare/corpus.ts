import { writeFileSync, mkdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import type { DocumentServer } from '../../src/simulator/document-api/document-server.js';

/**
 * Two small corpora that differ in exactly three ways — `music::0` only in A, `music::extra` only in B,
 * `music::1`'s title — and are written differently but equal elsewhere: a tensor in the long form with its cells
 * reordered, numbers as other text, a reordered weighted set, a map as entries.
 */

const type = 'tensor<float>(x[3])';

function music(i: number): string {
  return JSON.stringify({
    title: `t${i}`,
    year: 2000 + i,
    n: 1.5,
    tags: { a: 1, b: 2 },
    emb: { type, values: [i, 0.5, 0.1] },
    m: { k: 'v' },
  });
}

/** `[id, fields JSON]` of side A: 30 music documents and 5 books. */
export function sideA(): Array<[string, string]> {
  return [
    ...Array.from({ length: 30 }, (_, i): [string, string] => [`id:ns:music::${i}`, music(i)]),
    ...Array.from({ length: 5 }, (_, i): [string, string] => [`id:ns:book::${i}`, JSON.stringify({ pages: 100 + i })]),
  ];
}

/** Side B: A with the planted differences and the equal rewritings. */
export function sideB(): Array<[string, string]> {
  const out = new Map(sideA());
  out.delete('id:ns:music::0');
  out.set('id:ns:music::extra', music(99));
  out.set('id:ns:music::1', music(1).replace('"t1"', '"changed"'));
  out.set(
    'id:ns:music::2',
    `{"title":"t2","year":2002,"n":1.5,"tags":{"a":1,"b":2},"m":{"k":"v"},"emb":{"type":"${type}","cells":[{"address":{"x":"2"},"value":0.1},{"address":{"x":"0"},"value":2},{"address":{"x":"1"},"value":0.5}]}}`,
  );
  out.set(
    'id:ns:music::3',
    `{"title":"t3","year":2.003e3,"n":1.50,"tags":{"a":1,"b":2},"m":{"k":"v"},"emb":{"type":"${type}","values":"404000003F0000003DCCCCCD"}}`,
  );
  out.set(
    'id:ns:music::4',
    `{"emb":{"type":"${type}","values":[4,0.5,0.1]},"m":[{"key":"k","value":"v"}],"tags":{"b":2,"a":1},"n":15e-1,"year":2004,"title":"t4"}`,
  );
  return [...out];
}

/** The three differences, as the diff file lists them. */
export const plantedDiff = [
  { id: 'id:ns:music::0', side: 'a' },
  { id: 'id:ns:music::1', field: 'title', a: 't1', b: 'changed' },
  { id: 'id:ns:music::extra', side: 'b' },
];

/** Puts the documents into the simulator as their very text (so `1.50` stays `1.50`). */
export function seed(server: DocumentServer, docs: Array<[string, string]>): void {
  for (const [id, fields] of docs) server.store.cluster().put(id, undefined, undefined, fields);
}

/** Feed lines (`{"put":...,"fields":...}`) of documents. */
export function feedLines(docs: Array<[string, string]>): string[] {
  return docs.map(([id, fields]) => `{"put":${JSON.stringify(id)},"fields":${fields}}`);
}

/** An export directory as `visit --output-dir` writes it: two slice files, the second gzipped, and a file to leave alone. */
export function writeExportDir(dir: string, docs: Array<[string, string]>): string {
  mkdirSync(dir, { recursive: true });
  const lines = feedLines(docs);
  const half = Math.ceil(lines.length / 2);
  writeFileSync(join(dir, 'slice-0000.jsonl'), `${lines.slice(0, half).join('\n')}\n`);
  writeFileSync(join(dir, 'slice-0001.jsonl.gz'), gzipSync(`${lines.slice(half).join('\n')}\n`));
  writeFileSync(join(dir, 'notes.txt'), 'not an export file\n');
  return dir;
}
