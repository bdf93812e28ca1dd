// The simulator's document interface in its own process, seeded in-process with N documents of about 1 KB (or
// about 130 bytes plus VISIT_BENCH_FILLER_BYTES, default 900).
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const count = Number(process.env.VISIT_BENCH_DOCUMENTS ?? 1_000_000);
// A content node's iteration time per document (VISIT_BENCH_COST_US, µs; 0: off), over VISIT_BENCH_PARALLELISM lanes.
const server = await startDocumentServer({
  port: 0,
  faults: {
    visitCostUs: Number(process.env.VISIT_BENCH_COST_US ?? 0),
    visitParallelism: Number(process.env.VISIT_BENCH_PARALLELISM ?? 16),
  },
});
const fillerBytes = Number(process.env.VISIT_BENCH_FILLER_BYTES ?? 900);
const filler = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(fillerBytes / 27) + 1).slice(0, fillerBytes);
// VISIT_BENCH_GROUPS=G: ids with locations n=0..G-1 (`id:bench:music:n=3:doc-7`), so the simulator keeps each
// location's documents together in its visit order, as a content node keeps a bucket's.
const groups = Number(process.env.VISIT_BENCH_GROUPS ?? 0);
function* documents() {
  for (let i = 0; i < count; i++) {
    yield {
      id: groups > 0 ? `id:bench:music:n=${i % groups}:doc-${i}` : `id:bench:music::doc-${i}`,
      fields: {
        title: `Song number ${i}`,
        artist: `Artist ${i % 997}`,
        year: 1960 + (i % 64),
        popularity: i % 100,
        lyrics: `${i} ${filler}`,
      },
    };
  }
}
server.store.seed(documents());
announce(server.url, () => server.close());
