import { isIP } from 'node:net';
import { VespaBulkError } from '../../core/errors.js';

/**
 * The two ends of a CONNECT exchange with a forward proxy (RFC 9110 §9.3.6): the request head we send, and the
 * head of the proxy's answer, read strictly (RFC 9112 §4, §5). Strict because the bytes after a 2xx head are
 * the tunnel: a head misread by one byte would hand the TLS handshake garbage, or the proxy's error page to
 * the endpoint's parser, and a lenient parser is where request smuggling starts.
 */

/** The head of a proxy's final answer to CONNECT. */
export interface ConnectResponse {
  status: number;
  reason: string;
  /** Field names lower-case, in order; values trimmed of OWS. */
  headers: [string, string][];
}

const CR = 0x0d;
const LF = 0x0a;
const defaultMaxHeadBytes = 16 * 1024;
/** At most this many bytes of an offending line go into a message. */
const quotedBytes = 40;

const statusLine = /^HTTP\/1\.[01] ([1-5]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;
/** RFC 9110 §5.6.2 tchar. */
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A CTL other than HTAB (CR and LF never reach a line's content). */
const forbiddenInValue = /[\x00-\x08\x0a-\x1f\x7f]/;

/** `bytes` for a message: at most `quotedBytes` of them, printable ASCII as is and the rest escaped, in quotes. */
function quoted(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes.subarray(0, quotedBytes)) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `"${out}${bytes.length > quotedBytes ? '…' : ''}"`;
}

function bad(message: string): VespaBulkError {
  return new VespaBulkError('VB_BAD_RESPONSE', `the proxy's answer to CONNECT ${message}`);
}

/**
 * The next line of `window` from `start`: its content's end (before CRLF), or undefined while no CRLF has come.
 * A bare LF, or a CR followed by anything but LF, is an error as soon as it is seen.
 */
function lineEnd(window: Buffer, start: number, lineNumber: number): number | undefined {
  const cr = window.indexOf(CR, start);
  const lf = window.indexOf(LF, start);
  if (lf >= 0 && (cr < 0 || lf < cr)) {
    throw bad(`has a bare LF (not CRLF) in line ${lineNumber}, after ${quoted(window.subarray(start, lf))}`);
  }
  if (cr < 0 || cr + 1 >= window.length) return undefined;
  if (window[cr + 1] !== LF) {
    throw bad(`has a bare CR (not CRLF) in line ${lineNumber}, after ${quoted(window.subarray(start, cr))}`);
  }
  return cr;
}

function parseStatusLine(line: Buffer): ConnectResponse {
  const text = line.toString('latin1');
  const match = statusLine.exec(text);
  if (!match) {
    throw bad(
      /^HTTP\/1\.[01]( |$)/.test(text)
        ? `has a malformed status line: ${quoted(line)}`
        : `does not start with HTTP/1.0 or HTTP/1.1: ${quoted(line)}`,
    );
  }
  const status = Number(match[1]);
  if (status === 101) throw bad('is 101 Switching Protocols: a proxy may not switch protocols on CONNECT');
  return { status, reason: match[2] ?? '', headers: [] };
}

function parseFieldLine(line: Buffer): [string, string] {
  const text = line.toString('latin1');
  if (text.startsWith(' ') || text.startsWith('\t')) {
    throw bad(`has a folded header line (obs-fold, RFC 9112 §5.2): ${quoted(line)}`);
  }
  const colon = text.indexOf(':');
  if (colon < 0) throw bad(`has a header line without a colon: ${quoted(line)}`);
  const name = text.slice(0, colon);
  if (/[ \t]$/.test(name)) throw bad(`has whitespace before the colon of a header line: ${quoted(line)}`);
  if (!token.test(name)) throw bad(`has a header name that is not a token: ${quoted(line)}`);
  const value = text.slice(colon + 1);
  if (forbiddenInValue.test(value)) throw bad(`has a control character in a header value: ${quoted(line)}`);
  return [name.toLowerCase(), value.replace(/^[ \t]+|[ \t]+$/g, '')];
}

/**
 * The first final answer in `buf` (the bytes read so far), or undefined while its head is incomplete. `rest`:
 * the bytes after the head (for a 2xx, the first bytes of the tunnel; a view of `buf`, not a copy). Interim 1xx
 * answers (not 101) before it are skipped. A 2xx's Content-Length and Transfer-Encoding are ignored: the
 * tunnel starts right after its head (RFC 9110 §9.3.6). Parses `buf` from its start on every call: call it
 * with all the bytes read so far.
 *
 * Throws VespaBulkError 'VB_BAD_RESPONSE' saying what is wrong, as soon as it can be known: a malformed line
 * once it is complete, a bare CR or LF once seen, heads longer than `maxHeadBytes` (all heads together, default
 * 16 KiB) once that many bytes have come without their end.
 */
export function parseConnectResponse(
  buf: Buffer,
  maxHeadBytes = defaultMaxHeadBytes,
): { response: ConnectResponse; rest: Buffer } | undefined {
  const window = buf.subarray(0, maxHeadBytes);
  let head: ConnectResponse | undefined;
  let start = 0;
  for (let lineNumber = 1; ; lineNumber++) {
    const end = lineEnd(window, start, lineNumber);
    if (end === undefined) {
      if (buf.length >= maxHeadBytes) throw bad(`has a head longer than ${maxHeadBytes} bytes`);
      return undefined;
    }
    const line = window.subarray(start, end);
    start = end + 2;
    if (head === undefined) head = parseStatusLine(line);
    else if (line.length > 0) head.headers.push(parseFieldLine(line));
    else if (head.status >= 200) return { response: head, rest: buf.subarray(start) };
    else head = undefined;
  }
}

/** The value of a header (the first one, the name compared case-insensitively), or undefined. */
export function connectHeader(response: ConnectResponse, name: string): string | undefined {
  const lower = name.toLowerCase();
  return response.headers.find(([field]) => field === lower)?.[1];
}

/** A host as the CONNECT line's authority (RFC 9112 §3.2.3): a reg-name or IPv4, or an IPv6 address in brackets. */
function authorityHost(host: string): string | undefined {
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const bare = bracketed ? host.slice(1, -1) : host;
  if (isIP(bare) === 6) return /^[0-9A-Za-z:.%_-]+$/.test(bare) ? `[${bare}]` : undefined;
  return !bracketed && /^[A-Za-z0-9._~!$&'()*+,;=%-]+$/.test(bare) ? bare : undefined;
}

/**
 * The request head sent to the proxy: `CONNECT host:port HTTP/1.1`, `Host: host:port`, and
 * `Proxy-Authorization` when given; IPv6 in brackets. Throws VB_USAGE for a host with characters that would
 * break the line (CR, LF, space, etc.), a port out of range, or an authorization no header can carry.
 */
export function connectRequestHead(host: string, port: number, authorization?: string): Buffer {
  const shownHost = authorityHost(host);
  if (shownHost === undefined) {
    throw new VespaBulkError('VB_USAGE', `cannot ask a proxy for a tunnel to host ${JSON.stringify(host)}`);
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new VespaBulkError('VB_USAGE', `cannot ask a proxy for a tunnel to port ${port}`);
  }
  // The value is a credential: say what is wrong with it, never what it is.
  if (authorization !== undefined && !/^[\t\x20-\x7e]*$/.test(authorization)) {
    throw new VespaBulkError('VB_USAGE', 'the proxy authorization holds characters a header cannot carry');
  }
  const authority = `${shownHost}:${port}`;
  const lines = [`CONNECT ${authority} HTTP/1.1`, `Host: ${authority}`];
  if (authorization !== undefined) lines.push(`Proxy-Authorization: ${authorization}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}
