/**
 * Simulator put throughput, as a ratio to a bare node:http server answering 200 {} in the same run, with the
 * same autocannon settings (connections, pipelining, ~1 KB body, a fresh document id per request).
 * Rounds alternate between the two servers and the median of each is compared, because the machine is shared.
 *   npx tsx benchmarks/server/put-throughput.ts [--seconds 5] [--rounds 3] [--connections 10] [--pipelining 10]
 */
import autocannon from 'autocannon';
import { parseArgs } from 'node:util';
import { startChildServer, median, printTable } from '../lib/child.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    pipelining: { type: 'string', default: '10' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const pipelining = Number(values.pipelining);

const fields = {
  title: 'A song about a river at night',
  artist: 'Nora Vale',
  year: 2019,
  duration: 233,
  genres: ['folk', 'ambient'],
  popularity: 42.5,
  lyrics: 'la '.repeat(280),
};
const body = JSON.stringify({ fields });

async function load(url: string): Promise<{ rps: number; errors: number; non2xx: number }> {
  const result = await autocannon({
    url: `${url}/document/v1/bench/music/docid/doc-[<id>]`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    idReplacement: true,
    connections,
    pipelining,
    duration: seconds,
  });
  return { rps: result.requests.average, errors: result.errors, non2xx: result.non2xx };
}

const scripts = { bare: 'benchmarks/server/bare-server.ts', simulator: 'benchmarks/server/sim-server.ts' } as const;
const rates: Record<keyof typeof scripts, number[]> = { bare: [], simulator: [] };
let problems = 0;
for (let round = 0; round < rounds; round++) {
  for (const name of ['bare', 'simulator'] as const) {
    const child = await startChildServer(scripts[name]);
    try {
      const r = await load(child.url);
      rates[name].push(r.rps);
      problems += r.errors + r.non2xx;
    } finally {
      await child.stop();
    }
  }
}
const bare = median(rates.bare);
const sim = median(rates.simulator);
printTable(
  `simulator put throughput (${connections} connections x ${pipelining} pipelined, ${body.length} B bodies, ${rounds} x ${seconds} s, medians)`,
  [
    { server: 'bare node:http (baseline)', 'requests/s': bare.toFixed(0), ratio: '1.00' },
    { server: 'vespa-bulk simulator', 'requests/s': sim.toFixed(0), ratio: (sim / bare).toFixed(2) },
  ],
);
process.stdout.write(
  `target >= 0.80: ${sim / bare >= 0.8 ? 'met' : 'MISSED'}${problems ? `; ${problems} errors or non-2xx answers` : ''}\n`,
);
