import http2 from 'node:http2';
import https from 'node:https';
import { once } from 'node:events';
import { Agent, request } from 'undici';

export interface Answer {
  status: number;
  text: string;
  json: any;
  /** 'h2' or 'http/1.1' as agreed by ALPN. */
  protocol: string | undefined;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One request over HTTP/1.1 (ALPN offering only http/1.1), through node:https. */
export function h1Request(
  url: string,
  options: {
    method?: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
  },
): Promise<Answer> {
  const u = new URL(url);
  // ALPNProtocols reaches tls.connect; the https typings do not list it.
  const tlsOptions = { ALPNProtocols: ['http/1.1'] } as https.RequestOptions;
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        ...tlsOptions,
        host: u.hostname,
        port: u.port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
        ca: options.ca,
        cert: options.cert,
        key: options.key,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            text,
            json: parse(text),
            protocol: (res.socket as { alpnProtocol?: string | false }).alpnProtocol || undefined,
          });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** One request over HTTP/2 (ALPN offering h2), through node:http2. */
export async function h2Request(
  url: string,
  options: {
    method?: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
  },
): Promise<Answer> {
  const session = http2.connect(url, { ca: options.ca, cert: options.cert, key: options.key });
  session.on('error', () => {});
  try {
    await Promise.race([once(session, 'connect'), once(session, 'error').then(([e]) => Promise.reject(e))]);
    const stream = session.request({
      ':method': options.method ?? 'GET',
      ':path': options.path,
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    });
    stream.setTimeout(10_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.end(options.body);
    const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return { status: Number(headers[':status']), text, json: parse(text), protocol: session.alpnProtocol };
  } finally {
    session.close();
  }
}

/** One request through undici with the given TLS material (a fresh Agent, closed afterwards). */
export async function undiciRequest(
  url: string,
  options: {
    method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
    body?: string;
    headers?: Record<string, string>;
    ca?: Buffer;
    cert?: Buffer;
    key?: Buffer;
    allowH2?: boolean;
  },
): Promise<{ status: number; json: any }> {
  const agent = new Agent({
    connect: { ca: options.ca, cert: options.cert, key: options.key },
    allowH2: options.allowH2 ?? false,
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  try {
    const res = await request(url, {
      method: options.method ?? 'GET',
      body: options.body,
      headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      dispatcher: agent,
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: parse(text) };
  } finally {
    await agent.close().catch(() => {});
  }
}
