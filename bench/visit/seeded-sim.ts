// The simulator's document interface in its own process, seeded in-process with N documents of about 1 KB.
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { announce } from '../lib/child.js';

const count = Number(process.env.VISIT_BENCH_DOCUMENTS ?? 1_000_000);
const server = await startDocumentServer({ port: 0 });
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
