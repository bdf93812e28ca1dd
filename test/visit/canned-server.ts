import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A purpose-built visit peer: a fixed corpus streamed as JSONL (or as the plain JSON object), with a
 * token every `tokenEvery` documents, and faults scripted per request. Used to test the visitor's edges
 * without the simulator.
 */
export interface CannedOptions {
  documents: number;
  tokenEvery: number;
  /** Per request number (0-based): cut the response after this many documents. */
  cutAfter?: (request: number) => number | undefined;
  /** Per request number: answer this status instead. */
  status?: (request: number) => number | undefined;
  /** Answer the plain JSON object instead of JSONL. */
  plain?: boolean;
  /** Documents per response; the rest comes with the next token. */
  perResponse?: number;
}

export async function startCannedServer(options: CannedOptions) {
  const urls: string[] = [];
  const ids = Array.from({ length: options.documents }, (_, i) => `id:ns:doc::${i}`);
  const server = createServer((req, res: ServerResponse) => {
    const n = urls.length;
    urls.push(req.url!);
    const url = new URL(req.url!, 'http://x');
    const status = options.status?.(n);
    if (status !== undefined) {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ pathId: url.pathname, message: `scripted ${status}` }));
      return;
    }
    const start = Number(url.searchParams.get('continuation') ?? '0');
    const end = Math.min(ids.length, start + (options.perResponse ?? ids.length));
    const cut = options.cutAfter?.(n);
    const doc = (i: number) => `{"put":"${ids[i]}","fields":{"n":${i}}}`;
    if (options.plain) {
      res.writeHead(200, { 'content-type': 'application/json' });
      let body = `{"pathId":"${url.pathname}","documents":[`;
      for (let i = start; i < end; i++) {
        if (cut !== undefined && i - start >= cut) {
          res.write(body);
          res.destroy();
          return;
        }
        body += `${i > start ? ',' : ''}{"id":"${ids[i]}","fields":{"n":${i}}}`;
      }
      body += `],"documentCount":${end - start}${end < ids.length ? `,"continuation":"${end}"` : ''}}`;
      res.end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/jsonl; charset=UTF-8' });
    let out = '';
    for (let i = start; i < end; i++) {
      if (cut !== undefined && i - start >= cut) {
        res.write(out);
        // a half line, then the connection dies
        res.write(doc(i).slice(0, 10));
        setTimeout(() => res.destroy(), 5);
        return;
      }
      out += `${doc(i)}\n`;
      if ((i + 1 - start) % options.tokenEvery === 0 && i + 1 < end) {
        out += `{"continuation":{"token":"${i + 1}","percentFinished":${((100 * (i + 1)) / ids.length).toFixed(1)}}}\n`;
      }
    }
    out += `{"sessionStats":{"documentCount":${end - start}}}\n`;
    out +=
      end < ids.length
        ? `{"continuation":{"token":"${end}","percentFinished":50}}\n`
        : '{"continuation":{"percentFinished":100.0}}\n';
    res.end(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    urls,
    ids,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
