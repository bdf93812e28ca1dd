// The baseline: the least a node:http server can do per request (read the body, answer 200 {}).
import { createServer } from 'node:http';
import { announce } from '../lib/child.js';

const body = Buffer.from('{}');
// The same server options as the simulator's listener, so only the per-request work differs.
const server = createServer({ keepAlive: true, noDelay: true }, (req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  announce(`http://127.0.0.1:${port}`, () => new Promise<void>((r) => server.close(() => r())));
});
