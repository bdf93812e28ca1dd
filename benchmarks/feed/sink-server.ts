/**
 * A minimal /document/v1 sink for throughput benchmarks: node:http (which answers pipelined requests in
 * order), reads each body and answers 200 with a Vespa-shaped `{"pathId","id"}`. Run as a child process; it
 * prints its URL on stdout and exits when stdin closes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const body = `{"pathId":${JSON.stringify(q < 0 ? url : url.slice(0, q))},"id":"id:ns:music::x"}`;
    res.writeHead(200, { 'content-type': 'application/json;charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
