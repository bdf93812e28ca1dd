// The simulator's document interface in its own process, seeded in-process with N documents of about 1 KB.
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const count = Number(process.env.VISIT_BENCH_DOCUMENTS ?? 1_000_000);
// A content node's iteration time per document (VISIT_BENCH_COST_US, µs; 0: off), over VISIT_BENCH_PARALLELISM lanes.
const server = await startDocumentServer({
  port: 0,
  faults: { visitCostUs: Number(process.env.VISIT_BENCH_COST_US ?? 0), visitParallelism: Number(process.env.VISIT_BENCH_PARALLELISM ?? 16) },
});
const filler = 'lorem ipsum dolor sit amet '.repeat(40).slice(0, 900);
function* documents() {
  for (let i = 0; i < count; i++) {
    yield {
      id: `id:bench:music::doc-${i}`,
      fields: { title: `Song number ${i}`, artist: `Artist ${i % 997}`, year: 1960 + (i % 64), popularity: i % 100, lyrics: `${i} ${filler}` },
    };
  }
}
server.store.seed(documents());
announce(server.url, () => server.close());
