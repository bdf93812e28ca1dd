import http2 from 'node:http2';

/** One exchange over an HTTP/2 session (node:http2 as the client), answered in full. */
export interface H2Answer {
  status: number;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export function h2Request(
  session: http2.ClientHttp2Session,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: http2.OutgoingHttpHeaders = {},
): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': path, ...headers });
    let status = 0;
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status, text, json });
    });
    stream.on('error', reject);
    // A stream cut without an error (its session destroyed) ends here; after 'end' this changes nothing.
    stream.on('close', () => reject(new Error(`stream closed before its end (status ${status})`)));
    stream.end(body);
  });
}
