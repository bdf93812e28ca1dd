// One side of the compare benchmark: the simulator's document interface in its own process, seeded in-process (no
// feeding) with COMPARE_BENCH_DOCUMENTS documents of about 1 KB. With COMPARE_BENCH_CHANGE_EVERY=K, every K-th
// document has another `popularity` (the documents that differ); both sides are otherwise the same corpus.
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const count = Number(process.env.COMPARE_BENCH_DOCUMENTS ?? 1_000_000);
const changeEvery = Number(process.env.COMPARE_BENCH_CHANGE_EVERY ?? 0);
const filler = 'lorem ipsum dolor sit amet '.repeat(40).slice(0, 900);
const server = await startDocumentServer({ port: 0 });
function* documents() {
  for (let i = 0; i < count; i++) {
    const changed = changeEvery > 0 && i % changeEvery === 0;
    yield {
      id: `id:bench:music::doc-${i}`,
      fields: {
        title: `Song number ${i}`,
        artist: `Artist ${i % 997}`,
        year: 1960 + (i % 64),
        popularity: changed ? -1 : i % 100,
        embedding: { type: 'tensor<float>(x[4])', values: [i % 7, 0.5, 0.25, 1] },
        lyrics: `${i} ${filler}`,
      },
    };
  }
}
server.store.seed(documents());
announce(server.url, () => server.close());
