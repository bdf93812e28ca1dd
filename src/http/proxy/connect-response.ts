import { VespaBulkError } from '../../core/errors.js';

/** The head of a proxy's answer to CONNECT. */
export interface ConnectResponse {
  status: number;
  reason: string;
  /** Field names lower-case, in order; values trimmed of OWS. */
  headers: [string, string][];
}

/** Heads together longer than this without an end are refused: no proxy's answer to CONNECT is near it. */
const defaultMaxHeadBytes = 16 * 1024;

const statusLine = /^HTTP\/1\.[01] ([1-5]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
const fieldLine = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):([\t\x20-\x7e\x80-\xff]*)$/;

/**
 * The first final answer in `buf` (the bytes read so far), or undefined while its head is incomplete; `rest`, the
 * bytes after it (for a 2xx, the tunnel's first bytes: RFC 9110 §9.3.6, Content-Length and Transfer-Encoding of a
 * 2xx are ignored). Interim 1xx answers before it are skipped; a 101 is refused. Strict as RFC 9112 §2.2 allows:
 * lines end in CRLF only, no obs-fold, no white space before a field's colon. Throws VB_BAD_RESPONSE saying what
 * is wrong.
 */
export function parseConnectResponse(
  buf: Buffer,
  maxHeadBytes = defaultMaxHeadBytes,
): { response: ConnectResponse; rest: Buffer } | undefined {
  let start = 0;
  for (;;) {
    const end = headEnd(buf, start, maxHeadBytes);
    if (end === undefined) return undefined;
    const response = parseHead(buf.toString('latin1', start, end - 4));
    start = end;
    if (response.status >= 200) return { response, rest: buf.subarray(end) };
    if (response.status === 101)
      throw new VespaBulkError(
        'VB_BAD_RESPONSE',
        'a 101 (Switching Protocols): a proxy may not switch protocols on CONNECT',
      );
  }
}

/** The offset after the head's blank line from `start`, undefined while it is not there; a bare CR or LF is an error. */
function headEnd(buf: Buffer, start: number, maxHeadBytes: number): number | undefined {
  for (let i = start; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x0a) throw bad(`a bare LF ends a line: '${quote(buf, start, i)}'`);
    if (c !== 0x0d) continue;
    if (i + 1 >= buf.length) break;
    if (buf[i + 1] !== 0x0a) throw bad(`a bare CR in a line: '${quote(buf, start, i)}'`);
    if (i + 3 < buf.length && buf[i + 2] === 0x0d && buf[i + 3] === 0x0a) return i + 4;
    if (i + 2 < buf.length && buf[i + 2] === 0x0d && i + 3 >= buf.length) break;
    i++;
  }
  if (buf.length > maxHeadBytes) throw bad(`no end of its head within ${maxHeadBytes} bytes`);
  return undefined;
}

function parseHead(head: string): ConnectResponse {
  const lines = head.split('\r\n');
  const first = statusLine.exec(lines[0]);
  if (first === null) throw bad(`not an HTTP/1.x status line: '${shorten(lines[0])}'`);
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (line.startsWith(' ') || line.startsWith('\t')) throw bad(`a folded header line (obs-fold): '${shorten(line)}'`);
    const field = fieldLine.exec(line);
    if (field === null) throw bad(`not a header line: '${shorten(line)}'`);
    headers.push([field[1].toLowerCase(), field[2].replace(/^[\t ]+|[\t ]+$/g, '')]);
  }
  return { status: Number(first[1]), reason: first[2] ?? '', headers };
}

/**
 * The request head sent to the proxy: `CONNECT host:port HTTP/1.1`, `Host: host:port`, and `Proxy-Authorization`
 * when given; an IPv6 address in brackets. VB_USAGE for a host that would break the line.
 */
export function connectRequestHead(host: string, port: number, authorization?: string): Buffer {
  if (!/^[A-Za-z0-9._~%!$&'()*+,;=:-]+$/.test(host))
    throw new VespaBulkError('VB_USAGE', `a host name that cannot be sent in CONNECT: '${shorten(host)}'`);
  const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const auth = authorization === undefined ? '' : `Proxy-Authorization: ${authorization}\r\n`;
  return Buffer.from(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`, 'latin1');
}

/** The value of a header (the first one, by case-insensitive name), or undefined. */
export function connectHeader(response: ConnectResponse, name: string): string | undefined {
  const lower = name.toLowerCase();
  return response.headers.find(([n]) => n === lower)?.[1];
}

function bad(what: string): VespaBulkError {
  return new VespaBulkError('VB_BAD_RESPONSE', what);
}

/** A line as it may be quoted in a message: at most 40 characters, control characters escaped. */
function shorten(line: string): string {
  const cut = line.length > 40 ? `${line.slice(0, 40)}…` : line;
  return cut.replace(/[\x00-\x1f\x7f-\xff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function quote(buf: Buffer, start: number, at: number): string {
  const lineStart = Math.max(start, buf.lastIndexOf(0x0a, at - 1) + 1);
  return shorten(buf.toString('latin1', lineStart, at));
}
