import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Responder = (req: RecordedRequest, res: ServerResponse) => void;

/** A loopback node:http server (no undici) that records every request and answers with `respond`. */
export async function startRecordingServer(respond?: Responder) {
  const requests: RecordedRequest[] = [];
  const defaultRespond: Responder = (req, res) => {
    const body = JSON.stringify({ pathId: req.url.split('?')[0], id: 'id:x:y::z' });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(rec);
      (respond ?? defaultRespond)(rec, res);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
