/**
 * Which HTTP/2 client: node:http2, undici's HTTP/2 client and this project's (src/http/h2/), each posting the
 * same ~1 KB puts with the same number in flight, in a process of its own (so its CPU is its own), against the
 * container's Jetty at 10 ms per operation and at 0 ms (a null endpoint). Prints ops/s and CPU per request
 * of each as ratios to node:http2's, measured in the same run, and the most streams Jetty saw on one connection.
 *
 *   npx tsx benchmarks/jetty/h2-clients.ts [--requests 50000] [--inflight 256] [--connections 2]
 *   (one client:  npx tsx benchmarks/jetty/h2-clients.ts --client ours|node|undici --url URL ...)
 */
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { jettyScript, startJetty } from './endpoint.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    inflight: { type: 'string', default: '256' },
    connections: { type: 'string', default: '2' },
    client: { type: 'string' },
    url: { type: 'string' },
  },
});
const requests = Number(values.requests);
const inflight = Number(values.inflight);
const connections = Number(values.connections);
const body = Buffer.from(
  JSON.stringify({
    fields: { title: 'A song about a river at night', artist: 'Nora Vale', year: 2019, lyrics: 'la '.repeat(300) },
  }),
);

type Client = 'node' | 'undici' | 'ours';
interface Result {
  rate: number;
  cpuUsPerRequest: number;
  failures: number;
}

/** Keeps `inflight` requests going until `requests` are answered; `send(i, done)` sends request i. */
function drive(send: (i: number, done: (ok: boolean) => void) => void): Promise<Result> {
  return new Promise((resolve) => {
    let sent = 0;
    let answered = 0;
    let failures = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const next = (): void => {
      const i = sent++;
      send(i, (ok) => {
        answered++;
        if (!ok) failures++;
        if (sent < requests) next();
        else if (answered === requests) {
          const used = process.cpuUsage(cpu);
          resolve({
            rate: requests / ((performance.now() - started) / 1000),
            cpuUsPerRequest: (used.user + used.system) / requests,
            failures,
          });
        }
      });
    };
    for (let i = 0; i < Math.min(inflight, requests); i++) next();
  });
}

async function runNode(url: string): Promise<Result> {
  const sessions = Array.from({ length: connections }, () => http2.connect(url));
  await Promise.all(sessions.map((s) => new Promise((r) => s.once('remoteSettings', r))));
  const r = await drive((i, done) => {
    const req = sessions[i % connections].request({
      ':method': 'POST',
      ':path': `/document/v1/ns/music/docid/n${i}`,
      'content-type': 'application/json',
    });
    let status = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', () => undefined);
    req.on('end', () => done(status === 200));
    req.on('error', () => done(false));
    req.end(body);
  });
  for (const s of sessions) s.close();
  return r;
}

async function runUndici(url: string): Promise<Result> {
  const { Pool } = await import('undici');
  const pool = new Pool(url, {
    connections,
    allowH2: true,
    maxConcurrentStreams: inflight,
    pipelining: inflight,
    connect: { useH2c: true } as object,
  });
  const r = await drive((i, done) => {
    pool
      .request({
        method: 'POST',
        path: `/document/v1/ns/music/docid/u${i}`,
        headers: { 'content-type': 'application/json' },
        body,
      })
      .then(
        async (res) => {
          await res.body.dump();
          done(res.statusCode === 200);
        },
        () => done(false),
      );
  });
  await pool.close();
  return r;
}

async function runOurs(url: string): Promise<Result> {
  const { Http2Transport } = await import('../../src/http/h2/h2-transport.js');
  const { dispatchTo } = await import('../../src/http/exchange.js');
  const pool = new Http2Transport(url, { connections, maxStreams: Math.ceil(inflight / connections) });
  const headers = ['content-type', 'application/json'];
  const receiver = {
    onRawResponse: (done: (ok: boolean) => void, res: { status: number }) => done(res.status === 200),
    onRawError: (done: (ok: boolean) => void) => done(false),
  };
  const r = await drive((i, done) =>
    dispatchTo(pool, { method: 'POST', path: `/document/v1/ns/music/docid/o${i}`, headers, body }, receiver, done),
  );
  await pool.close();
  return r;
}

/** Runs one client in a child process and returns what it printed. */
function child(client: Client, url: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(import.meta.url);
    const p = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        script,
        '--client',
        client,
        '--url',
        url,
        '--requests',
        String(requests),
        '--inflight',
        String(inflight),
        '--connections',
        String(connections),
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), 300_000);
    p.on('exit', (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as Result);
      } catch {
        reject(new Error(`${client} exited ${code} without a result (${out.slice(0, 200)})`));
      }
    });
  });
}

async function main(): Promise<void> {
  if (values.client !== undefined) {
    const run = { node: runNode, undici: runUndici, ours: runOurs }[values.client as Client];
    process.stdout.write(`${JSON.stringify(await run(values.url!))}\n`);
    process.exit(0);
  }
  const script = jettyScript();
  if (script === undefined) {
    console.log('skipped: no Jetty endpoint (shared/jetty-endpoint/start.sh beside the repository, or JETTY_ENDPOINT)');
    return;
  }
  console.log(`${requests} posts of ${body.length} bytes, ${inflight} in flight over ${connections} connections`);
  const rows: Record<string, string>[] = [];
  for (const delay of [10, 0]) {
    const endpoint = await startJetty(script, delay);
    try {
      // Unmeasured, so that the first client measured does not pay for Jetty's JIT compiling its h2 path.
      await child('ours', endpoint.url);
      const results = new Map<Client, Result>();
      for (const client of ['node', 'undici', 'ours'] as const) {
        await endpoint.reset();
        let r: Result;
        try {
          r = await child(client, endpoint.url);
        } catch (err) {
          rows.push({ endpoint: `${delay} ms`, client, 'ops/s': 'failed', note: (err as Error).message });
          continue;
        }
        results.set(client, r);
        const base = results.get('node');
        const stats = await endpoint.stats();
        rows.push({
          endpoint: `${delay} ms`,
          client,
          'ops/s': r.rate.toFixed(0),
          'vs node:http2': base ? (r.rate / base.rate).toFixed(2) : '',
          'CPU µs/request': r.cpuUsPerRequest.toFixed(1),
          'CPU vs node:http2': base ? (r.cpuUsPerRequest / base.cpuUsPerRequest).toFixed(2) : '',
          'most streams on a connection': String(stats.perConnectionMaxInProgress),
          failures: String(r.failures),
        });
      }
    } finally {
      await endpoint.stop();
    }
  }
  console.table(rows);
}

await main();
