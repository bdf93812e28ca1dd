import { startDocumentServer } from './src/server/document-server.js';
const s = await startDocumentServer({ port: 0 });
s.store.seed(Array.from({ length: 50000 }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { t: 'x'.repeat(500) } })));
console.log(s.url);
await new Promise((r) => setTimeout(r, 60_000));
