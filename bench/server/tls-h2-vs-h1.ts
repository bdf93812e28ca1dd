/**
 * Feeding over TLS: undici with HTTP/2 (ALPN h2, `allowH2: true`) against HTTP/1.1 pipelining, for ~1 KB puts
 * to the simulator in a child process. Both keep the same number of requests in flight; rounds alternate and
 * the median of each is compared. Prints the HTTP/2 rate as a ratio to the HTTP/1.1 one, and the same load
 * through node:http2's own client, which shows whether the server or undici's HTTP/2 client sets the limit.
 *   npx tsx bench/server/tls-h2-vs-h1.ts [--seconds 3] [--rounds 3] [--inflight 64] [--connections 4] [--h2-connections 1]
 */
import http2 from 'node:http2';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { makeTestPki } from '../../test/support/certs.js';
import { median, printTable, startChildServer } from '../lib/child.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    inflight: { type: 'string', default: '64' },
    connections: { type: 'string', default: '4' },
    'h2-connections': { type: 'string', default: '1' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const inflight = Number(values.inflight);
const connections = Number(values.connections);
const h2Connections = Number(values['h2-connections']);

const body = JSON.stringify({ fields: { title: 'A song about a river at night', artist: 'Nora Vale', year: 2019, lyrics: 'la '.repeat(300) } });

type Mode = 'http/1.1 pipelined' | 'h2' | 'h2 node:http2';

function poolFor(mode: Mode, url: string, ca: Buffer): Pool {
  return mode === 'h2'
    ? new Pool(url, { connections: h2Connections, allowH2: true, maxConcurrentStreams: inflight, connect: { ca } })
    : new Pool(url, { connections, pipelining: Math.ceil(inflight / connections), connect: { ca } });
}

/** The same load through node:http2's client: tells whether the server or undici's h2 client is the limit. */
async function loadNodeH2(url: string, ca: Buffer): Promise<{ rps: number; failures: number }> {
  const session = http2.connect(url, { ca });
  let done = 0;
  let failures = 0;
  let next = 0;
  const deadline = Date.now() + seconds * 1000;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'POST', ':path': `/document/v1/bench/music/docid/doc-${next++}`, 'content-type': 'application/json' });
      stream.on('response', (headers) => (headers[':status'] === 200 ? done++ : failures++));
      stream.on('error', reject);
      stream.on('end', resolve);
      stream.resume();
      stream.end(body);
    });
  const started = Date.now();
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (Date.now() < deadline) await one();
  }));
  const rps = done / ((Date.now() - started) / 1000);
  session.close();
  return { rps, failures };
}

async function load(mode: Mode, url: string, ca: Buffer): Promise<{ rps: number; failures: number }> {
  if (mode === 'h2 node:http2') return loadNodeH2(url, ca);
  const pool = poolFor(mode, url, ca);
  let done = 0;
  let failures = 0;
  let next = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const res = await pool.request({ method: 'POST', path: `/document/v1/bench/music/docid/doc-${next++}`, body, headers: { 'content-type': 'application/json' } });
      await res.body.dump();
      if (res.statusCode === 200) done++;
      else failures++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: inflight }, worker));
  const rps = done / ((Date.now() - started) / 1000);
  await pool.close();
  return { rps, failures };
}

const pki = makeTestPki();
const rates: Record<Mode, number[]> = { 'http/1.1 pipelined': [], h2: [], 'h2 node:http2': [] };
let failures = 0;
try {
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['http/1.1 pipelined', 'h2', 'h2 node:http2'] as const) {
      const child = await startChildServer('bench/server/tls-sim-server.ts', [], { SIM_TLS_CERT: pki.files.serverCert, SIM_TLS_KEY: pki.files.serverKey });
      try {
        const r = await load(mode, child.url, pki.pem.ca);
        rates[mode].push(r.rps);
        failures += r.failures;
      } finally {
        await child.stop();
      }
    }
  }
} finally {
  pki.cleanup();
}
const h1 = median(rates['http/1.1 pipelined']);
const h2 = median(rates.h2);
const nodeH2 = median(rates['h2 node:http2']);
printTable('Feeding over TLS to the simulator (1 KB puts), median of rounds', [
  { transport: `http/1.1, ${connections} connections, pipelining ${Math.ceil(inflight / connections)}`, 'req/s': h1.toFixed(0), ratio: '1.00' },
  { transport: `undici h2 (ALPN), ${h2Connections} connection(s), ${inflight} streams`, 'req/s': h2.toFixed(0), ratio: (h2 / h1).toFixed(2) },
  { transport: `node:http2 client, 1 session, ${inflight} streams (server check)`, 'req/s': nodeH2.toFixed(0), ratio: (nodeH2 / h1).toFixed(2) },
]);
if (failures > 0) console.log(`non-200 answers: ${failures}`);
