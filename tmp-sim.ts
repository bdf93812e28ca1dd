import { startChildServer } from './bench/lib/child.js';
const sim = await startChildServer('bench/visit/seeded-sim.ts', [], { VISIT_BENCH_DOCUMENTS: '200000' });
console.log(sim.url);
await new Promise((r) => setTimeout(r, 600_000));
