import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { HpackDecoder, literalField } from './hpack-decoder.js';

/**
 * The fault front: a server on 127.0.0.1 (port 0) in front of a simulator that, like the container, speaks
 * cleartext HTTP/2 (prior knowledge) and HTTP/1.1 on one port, told apart by the first bytes of each connection.
 * It passes each request on to the simulator (over HTTP/1.1), takes the whole answer, and writes it back itself,
 * frame by frame, so that a test's script can break it anywhere after the headers:
 *
 * - HTTP/2 (a raw implementation: every frame is the front's): RST_STREAM with any code (INTERNAL_ERROR, CANCEL,
 *   NO_ERROR...), GOAWAY with any code and a last stream id at or below the stream, then the connection closed;
 *   TCP FIN, TCP RST, or END_STREAM early (the answer ends cleanly, short);
 * - HTTP/1.1: the answer framed by Content-Length, chunked, or by the connection's end (`Connection: close`), then
 *   TCP FIN or TCP RST after some of the body (for chunked, at the body's length: before the final chunk).
 *
 * The partial body and the fault go out in one write (`together`: the client reads both in one event-loop turn)
 * or apart (a few ms between them). What the simulator did is done: a request is applied before its answer is cut.
 * A TCP RST is a close with SO_LINGER 0 once the partial body has left; a client that has read data before it may
 * be told a reset or an end, as its kernel decides (this Linux says an end).
 *
 * `test/faults/fault-front.test.ts` checks, with clients other than ours (node:http2, raw sockets), that each fault
 * is on the wire what this says.
 */

export type FrontProtocol = 'h2' | 'http1.1';

/** HTTP/2 error codes (RFC 9113, 7). */
export const h2Codes = {
  NO_ERROR: 0,
  PROTOCOL_ERROR: 1,
  INTERNAL_ERROR: 2,
  REFUSED_STREAM: 7,
  CANCEL: 8,
  ENHANCE_YOUR_CALM: 11,
} as const;

export type CutHow =
  /** HTTP/2: RST_STREAM(code). */
  | 'rst'
  /** HTTP/2: GOAWAY(last stream id, code), then TCP FIN. */
  | 'goaway'
  /** TCP FIN. */
  | 'fin'
  /** TCP RST. */
  | 'tcp-reset'
  /** HTTP/2: END_STREAM on the last DATA frame sent (the answer ends cleanly, short). HTTP/1.1: as `fin`. */
  | 'end';

/** How one answer is broken. */
export interface Cut {
  /** Bytes of the body sent before the fault (0: right after the headers). */
  at: number;
  how: CutHow;
  /** `rst`, `goaway`: the error code. Default INTERNAL_ERROR. */
  code?: number;
  /** `goaway`: the last stream id the server says it processed: this stream's (`at`), or the one before (`below`). Default `at`. */
  last?: 'at' | 'below';
  /** HTTP/1.1: how the answer is framed. Default `content-length`. */
  framing?: Http1Framing;
  /** Default `together`. */
  timing?: 'together' | 'apart';
}

export type Http1Framing = 'content-length' | 'chunked' | 'close';

/** One request and the simulator's answer to it, as the script sees them. */
export interface Exchange {
  protocol: FrontProtocol;
  method: string;
  /** Path and query. */
  path: string;
  /** `<method> <path without query>`. */
  key: string;
  /** The how-many-th time a request with this key arrived (1: the first). */
  arrival: number;
  /** The how-many-th request the front got (0: the first). */
  index: number;
  status: number;
  contentType: string;
  body: Buffer;
}

export type Script = (x: Exchange) => Cut | undefined;

export interface FrontOptions {
  /** What to break; undefined answers whole. */
  script?: Script;
  /** HTTP/1.1 framing of the answers not cut. Default `content-length`. */
  framing?: Http1Framing;
  /** Pass `Accept: application/json` on instead of what the client asked for: a server without JSONL. */
  plainJsonOnly?: boolean;
  /**
   * An answer of the front's own in place of the simulator's, which has applied the request all the same: a proxy's
   * 502 or 503 page after its upstream did the write. undefined passes the simulator's answer on.
   */
  page?: (x: Exchange) => Page | undefined;
}

/** An answer the front writes itself (see `FrontOptions.page`). */
export interface Page {
  status: number;
  contentType: string;
  body: Buffer;
}

/** An answer the front broke: which request, and how. */
export interface CutRecord {
  protocol: FrontProtocol;
  key: string;
  path: string;
  index: number;
  cut: Cut;
  /** The body's length whole. */
  length: number;
}

export interface FaultFront {
  url: string;
  /** How often each request (method and path without query) arrived. */
  readonly seen: Map<string, number>;
  /** How often each was passed on to the simulator. */
  readonly forwarded: Map<string, number>;
  /** Every answer broken, in order. */
  readonly cuts: CutRecord[];
  /** Connections by the protocol they spoke. */
  readonly connections: Record<FrontProtocol, number>;
  /**
   * HTTP/2: requests a GOAWAY said were not processed (above its last stream id) that the front had passed on, and
   * whether their answer had begun (headers sent): a GOAWAY with `last: 'below'` lies about them.
   */
  readonly deniedAfterForwarding: Map<string, { headersSent: boolean }>;
  /** Resolves once no request is on its way to the simulator (one whose client went away may still be). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export async function startFaultFront(backendUrl: string, options: FrontOptions = {}): Promise<FaultFront> {
  const upstream = new Pool(backendUrl, { connections: 64 });
  const sockets = new Set<Socket>();
  const front: Omit<FaultFront, 'url' | 'close' | 'settled'> = {
    seen: new Map(),
    forwarded: new Map(),
    cuts: [],
    connections: { h2: 0, 'http1.1': 0 },
    deniedAfterForwarding: new Map(),
  };
  let index = 0;
  let inFlight = 0;
  const onSettled: Array<() => void> = [];

  /** Passes the request on; resolves with the simulator's answer and the exchange the script sees. */
  const forward = async (
    protocol: FrontProtocol,
    method: string,
    path: string,
    headers: Map<string, string>,
    body: Buffer,
  ): Promise<Exchange> => {
    const key = `${method} ${path.split('?')[0]}`;
    front.forwarded.set(key, (front.forwarded.get(key) ?? 0) + 1);
    const pass: Record<string, string> = {};
    for (const name of ['accept', 'content-type', 'content-encoding', 'authorization']) {
      const v = headers.get(name);
      if (v !== undefined) pass[name] = v;
    }
    if (options.plainJsonOnly) pass.accept = 'application/json';
    inFlight++;
    let res: Awaited<ReturnType<typeof upstream.request>>;
    let answer: Buffer;
    try {
      res = await upstream.request({ method: method, path, headers: pass, body: body.length > 0 ? body : undefined });
      answer = Buffer.from(await res.body.arrayBuffer());
    } finally {
      if (--inFlight === 0) for (const wake of onSettled.splice(0)) wake();
    }
    const contentType = String(res.headers['content-type'] ?? 'application/json');
    const x: Exchange = {
      protocol,
      method,
      path,
      key,
      arrival: front.seen.get(key) ?? 1,
      index: index++,
      status: res.statusCode,
      contentType,
      body: answer,
    };
    const page = options.page?.(x);
    return page === undefined ? x : { ...x, ...page };
  };
  const arrived = (method: string, path: string): void => {
    const key = `${method} ${path.split('?')[0]}`;
    front.seen.set(key, (front.seen.get(key) ?? 0) + 1);
  };
  const planOf = (x: Exchange): Cut | undefined => {
    const cut = options.script?.(x);
    if (cut !== undefined) {
      if (!(cut.at >= 0 && cut.at <= x.body.length))
        throw new Error(`cut at ${cut.at} of a body of ${x.body.length} bytes`);
      front.cuts.push({ protocol: x.protocol, key: x.key, path: x.path, index: x.index, cut, length: x.body.length });
    }
    return cut;
  };

  const server: Server = createServer((socket) => {
    sockets.add(socket);
    // As servers do: the headers and the body are separate writes, which Nagle would hold back for the client's ACK.
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = Buffer.alloc(0);
    const sniff = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const n = Math.min(head.length, preface.length);
      if (head.subarray(0, n).equals(preface.subarray(0, n)) && head.length < preface.length) return;
      socket.off('data', sniff);
      if (head.subarray(0, preface.length).equals(preface)) {
        front.connections.h2++;
        new H2Connection(socket, head.subarray(preface.length), { forward, arrived, planOf, front });
      } else {
        front.connections['http1.1']++;
        new Http1Connection(socket, head, { forward, arrived, planOf, framing: options.framing ?? 'content-length' });
      }
    };
    socket.on('data', sniff);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...front,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    settled: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => onSettled.push(resolve))),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await upstream.destroy();
    },
  };
}

interface Hooks {
  forward: (
    protocol: FrontProtocol,
    method: string,
    path: string,
    headers: Map<string, string>,
    body: Buffer,
  ) => Promise<Exchange>;
  arrived: (method: string, path: string) => void;
  planOf: (x: Exchange) => Cut | undefined;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * TCP RST once the last write has left (`written`: its callback ran). A reset with bytes still on their way out
 * closes with a FIN instead; one that comes before the client read what arrived drops that too, as TCP does.
 */
function resetAfter(socket: Socket, written: Promise<void>): void {
  void written.then(() => {
    if (!socket.destroyed) socket.resetAndDestroy();
  });
}

// ------------------------------------------------------------ HTTP/2 ------------------------------------------------------------

const enum Type {
  Data = 0,
  Headers = 1,
  Priority = 2,
  RstStream = 3,
  Settings = 4,
  PushPromise = 5,
  Ping = 6,
  Goaway = 7,
  WindowUpdate = 8,
  Continuation = 9,
}
const EndStream = 0x1;
const Ack = 0x1;
const EndHeaders = 0x4;
const Padded = 0x8;
const PriorityFlag = 0x20;

function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([h, payload]);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
}

interface H2Stream {
  id: number;
  headers: Map<string, string>;
  body: Buffer[];
  /** The request was passed on to the simulator. */
  forwarded: boolean;
  key?: string;
  /** The answer's HEADERS went out. */
  headersSent: boolean;
  /** Body bytes still to send, and what comes after them. */
  out?: { data: Buffer; sent: number; end: 'end-stream' | Cut };
  sendWindow: number;
  /** Reset by the client, or finished. */
  closed: boolean;
}

class H2Connection {
  private buf: Buffer;
  private readonly decoder = new HpackDecoder();
  private readonly streams = new Map<number, H2Stream>();
  private headerBlock: { id: number; flags: number; parts: Buffer[] } | undefined;
  private peerInitialWindow = 65_535;
  private peerMaxFrame = 16_384;
  private sendWindow = 65_535;
  private dead = false;
  /** Settles once the last write has left. */
  private written: Promise<void> = Promise.resolve();
  /** Set once a GOAWAY went out: streams above it are not passed on. */
  private goneAway: number | undefined;
  private maxForwarded = 0;

  constructor(
    private readonly socket: Socket,
    rest: Buffer,
    private readonly hooks: Hooks & { front: Omit<FaultFront, 'url' | 'close' | 'settled'> },
  ) {
    this.buf = Buffer.from(rest);
    // Our settings: as the container, 512 streams at once; a large window for request bodies, returned as read.
    this.write([
      frame(Type.Settings, 0, 0, Buffer.concat([Buffer.from([0, 3]), u32(512), Buffer.from([0, 4]), u32(1 << 24)])),
      frame(Type.WindowUpdate, 0, 0, u32(1 << 30)),
    ]);
    socket.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      this.read();
    });
    socket.on('close', () => (this.dead = true));
    this.read();
  }

  private write(frames: Buffer[]): void {
    if (this.dead || frames.length === 0) return;
    this.written = new Promise((resolve) =>
      this.socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames), () => resolve()),
    );
  }

  private read(): void {
    while (!this.dead && this.buf.length >= 9) {
      const length = this.buf.readUIntBE(0, 3);
      if (this.buf.length < 9 + length) return;
      const type = this.buf[3];
      const flags = this.buf[4];
      const id = this.buf.readUInt32BE(5) & 0x7fffffff;
      const payload = this.buf.subarray(9, 9 + length);
      this.buf = this.buf.subarray(9 + length);
      try {
        this.onFrame(type, flags, id, payload);
      } catch {
        // A client the front cannot read: it goes away as a server would.
        this.write([frame(Type.Goaway, 0, 0, u32(this.maxForwarded, h2Codes.PROTOCOL_ERROR))]);
        this.dead = true;
        this.socket.end();
        return;
      }
    }
  }

  private onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.headerBlock !== undefined && type !== Type.Continuation) throw new Error('expected CONTINUATION');
    switch (type) {
      case Type.Settings: {
        if (flags & Ack) return;
        for (let at = 0; at + 6 <= payload.length; at += 6) {
          const key = payload.readUInt16BE(at);
          const value = payload.readUInt32BE(at + 2);
          if (key === 4) {
            const delta = value - this.peerInitialWindow;
            this.peerInitialWindow = value;
            for (const s of this.streams.values()) s.sendWindow += delta;
          } else if (key === 5) this.peerMaxFrame = value;
        }
        this.write([frame(Type.Settings, Ack, 0)]);
        this.pump();
        return;
      }
      case Type.Ping:
        if (!(flags & Ack)) this.write([frame(Type.Ping, Ack, 0, payload)]);
        return;
      case Type.WindowUpdate: {
        const inc = payload.readUInt32BE(0) & 0x7fffffff;
        if (id === 0) this.sendWindow += inc;
        else {
          const s = this.streams.get(id);
          if (s !== undefined) s.sendWindow += inc;
        }
        this.pump();
        return;
      }
      case Type.Headers: {
        let start = 0;
        let end = payload.length;
        if (flags & Padded) {
          start = 1;
          end -= payload[0];
        }
        if (flags & PriorityFlag) start += 5;
        const part = Buffer.from(payload.subarray(start, end));
        if (flags & EndHeaders) this.onHeaderBlock(id, flags, part);
        else this.headerBlock = { id, flags, parts: [part] };
        return;
      }
      case Type.Continuation: {
        const block = this.headerBlock;
        if (block === undefined || block.id !== id) throw new Error('CONTINUATION out of place');
        block.parts.push(Buffer.from(payload));
        if (flags & EndHeaders) {
          this.headerBlock = undefined;
          this.onHeaderBlock(id, block.flags, Buffer.concat(block.parts));
        }
        return;
      }
      case Type.Data: {
        let data = payload;
        if (flags & Padded) data = payload.subarray(1, payload.length - payload[0]);
        const s = this.streams.get(id);
        // What the client sends is read at once: its windows are given back as it comes.
        if (payload.length > 0)
          this.write([
            frame(Type.WindowUpdate, 0, 0, u32(payload.length)),
            ...(s !== undefined && !(flags & EndStream) ? [frame(Type.WindowUpdate, 0, id, u32(payload.length))] : []),
          ]);
        if (s === undefined || s.closed) return;
        s.body.push(Buffer.from(data));
        if (flags & EndStream) this.onRequest(s);
        return;
      }
      case Type.RstStream: {
        const s = this.streams.get(id);
        if (s !== undefined) {
          s.closed = true;
          this.streams.delete(id);
        }
        return;
      }
      default:
        // PRIORITY, GOAWAY from the client, unknown frames: nothing to do.
        return;
    }
  }

  private onHeaderBlock(id: number, flags: number, block: Buffer): void {
    const fields = this.decoder.decode(block);
    if (this.goneAway !== undefined && id > this.goneAway) return;
    const headers = new Map<string, string>();
    for (const [name, value] of fields) headers.set(name, value);
    const s: H2Stream = {
      id,
      headers,
      body: [],
      forwarded: false,
      headersSent: false,
      sendWindow: this.peerInitialWindow,
      closed: false,
    };
    this.streams.set(id, s);
    this.hooks.arrived(headers.get(':method') ?? 'GET', headers.get(':path') ?? '/');
    if (flags & EndStream) this.onRequest(s);
  }

  private onRequest(s: H2Stream): void {
    if (this.dead || (this.goneAway !== undefined && s.id > this.goneAway)) return;
    s.forwarded = true;
    this.maxForwarded = Math.max(this.maxForwarded, s.id);
    const method = s.headers.get(':method') ?? 'GET';
    const path = s.headers.get(':path') ?? '/';
    s.key = `${method} ${path.split('?')[0]}`;
    void this.hooks.forward('h2', method, path, s.headers, Buffer.concat(s.body)).then(
      (x) => this.answer(s, x),
      () => {
        if (!s.closed) this.write([frame(Type.RstStream, 0, s.id, u32(h2Codes.INTERNAL_ERROR))]);
      },
    );
  }

  private answer(s: H2Stream, x: Exchange): void {
    if (this.dead || s.closed) return;
    const cut = this.hooks.planOf(x);
    const block = Buffer.concat([
      literalField(':status', String(x.status)),
      literalField('content-type', x.contentType),
    ]);
    const empty = x.body.length === 0 && cut === undefined;
    s.headersSent = true;
    this.write([frame(Type.Headers, EndHeaders | (empty ? EndStream : 0), s.id, block)]);
    if (empty) {
      this.finish(s);
      return;
    }
    s.out = { data: cut === undefined ? x.body : x.body.subarray(0, cut.at), sent: 0, end: cut ?? 'end-stream' };
    this.pump();
  }

  private finish(s: H2Stream): void {
    s.closed = true;
    this.streams.delete(s.id);
  }

  /** Sends what the windows allow; a stream whose body is out gets its end: END_STREAM, or its fault. */
  private pump(): void {
    const frames: Buffer[] = [];
    for (const s of [...this.streams.values()]) {
      const out = s.out;
      if (out === undefined || s.closed) continue;
      while (out.sent < out.data.length) {
        const n = Math.min(out.data.length - out.sent, this.peerMaxFrame, s.sendWindow, this.sendWindow);
        if (n <= 0) break;
        const last = out.sent + n === out.data.length;
        frames.push(
          frame(
            Type.Data,
            last && out.end === 'end-stream' ? EndStream : 0,
            s.id,
            out.data.subarray(out.sent, out.sent + n),
          ),
        );
        out.sent += n;
        s.sendWindow -= n;
        this.sendWindow -= n;
      }
      if (out.sent < out.data.length) continue;
      s.out = undefined;
      if (out.end === 'end-stream') {
        // An empty body that is not cut never comes here (its HEADERS ended the stream).
        this.finish(s);
        continue;
      }
      const cut = out.end;
      if (cut.timing === 'apart') {
        // The partial body now, the fault once the client has had time to read it.
        this.write(frames.splice(0));
        void pause(15).then(() => this.fault(s, cut, []));
      } else this.fault(s, cut, frames.splice(0));
    }
    this.write(frames);
  }

  /** Breaks the answer of `s` (after `before`, written in the same write). */
  private fault(s: H2Stream, cut: Cut, before: Buffer[]): void {
    if (this.dead) return;
    const code = cut.code ?? h2Codes.INTERNAL_ERROR;
    switch (cut.how) {
      case 'rst':
        this.finish(s);
        this.write([...before, frame(Type.RstStream, 0, s.id, u32(code))]);
        return;
      case 'end':
        this.finish(s);
        this.write([...before, frame(Type.Data, EndStream, s.id)]);
        return;
      case 'goaway': {
        const last = cut.last === 'below' ? Math.max(0, s.id - 2) : Math.max(s.id, this.maxForwarded);
        this.goneAway = last;
        for (const other of this.streams.values()) {
          if (other.id > last && other.forwarded && other.key !== undefined)
            this.hooks.front.deniedAfterForwarding.set(other.key, { headersSent: other.headersSent });
        }
        this.write([...before, frame(Type.Goaway, 0, 0, u32(last, code))]);
        this.dead = true;
        this.socket.end();
        return;
      }
      case 'fin':
        this.write(before);
        this.dead = true;
        this.socket.end();
        return;
      case 'tcp-reset':
        this.write(before);
        this.dead = true;
        resetAfter(this.socket, this.written);
        return;
    }
  }
}

// ------------------------------------------------------------ HTTP/1.1 ------------------------------------------------------------

const reasons: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  404: 'Not Found',
  412: 'Precondition Failed',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** An HTTP/1.1 connection served one request at a time, as the container does: the next is read once an answer is out. */
class Http1Connection {
  private buf: Buffer;
  private busy = false;
  private dead = false;

  constructor(
    private readonly socket: Socket,
    first: Buffer,
    private readonly hooks: Hooks & { framing: Http1Framing },
  ) {
    this.buf = Buffer.from(first);
    socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      this.next();
    });
    socket.on('close', () => (this.dead = true));
    this.next();
  }

  private next(): void {
    if (this.busy || this.dead) return;
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const lines = this.buf.toString('latin1', 0, end).split('\r\n');
    const [method, path] = lines[0].split(' ');
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    let at = end + 4;
    let body: Buffer;
    if ((headers.get('transfer-encoding') ?? '').toLowerCase().includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = this.buf.indexOf('\r\n', at);
        if (lineEnd < 0) return;
        const size = parseInt(this.buf.toString('latin1', at, lineEnd), 16);
        if (this.buf.length < lineEnd + 2 + size + 2) return;
        parts.push(this.buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers.get('content-length') ?? 0);
      if (this.buf.length < at + length) return;
      body = Buffer.from(this.buf.subarray(at, at + length));
      at += length;
    }
    this.buf = this.buf.subarray(at);
    this.busy = true;
    this.hooks.arrived(method, path);
    void this.hooks.forward('http1.1', method, path, headers, body).then(
      (x) => this.answer(x),
      () => this.socket.destroy(),
    );
  }

  private answer(x: Exchange): void {
    if (this.dead) return;
    const cut = this.hooks.planOf(x);
    const framing = cut?.framing ?? this.hooks.framing;
    const head = [`HTTP/1.1 ${x.status} ${reasons[x.status] ?? 'Unknown'}`, `content-type: ${x.contentType}`];
    if (framing === 'content-length') head.push(`content-length: ${x.body.length}`);
    else if (framing === 'chunked') head.push('transfer-encoding: chunked');
    else head.push('connection: close');
    const headBytes = Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1');
    // The body's bytes on the wire, and where on the wire body byte `at` falls.
    let wire: Buffer;
    let wireAt: (at: number) => number;
    if (framing === 'chunked') {
      // Chunks of at most 4 KiB, each after its size line, then the final chunk.
      const parts: Buffer[] = [];
      const starts: number[] = [];
      let offset = 0;
      for (let i = 0; i < x.body.length; i += 4096) {
        const data = x.body.subarray(i, i + 4096);
        const size = Buffer.from(`${data.length.toString(16)}\r\n`, 'latin1');
        starts.push(offset + size.length);
        parts.push(size, data, Buffer.from('\r\n'));
        offset += size.length + data.length + 2;
      }
      parts.push(Buffer.from('0\r\n\r\n'));
      wire = Buffer.concat(parts);
      // Inside a chunk: after its size line. At the body's end: after the last chunk, before the final one.
      wireAt = (at) => (at === x.body.length ? offset : starts[Math.floor(at / 4096)] + (at % 4096));
    } else {
      wire = x.body;
      wireAt = (at) => at;
    }
    if (cut === undefined) {
      this.socket.write(Buffer.concat([headBytes, wire]));
      if (framing === 'close') {
        this.dead = true;
        this.socket.end();
        return;
      }
      this.busy = false;
      this.next();
      return;
    }
    const partial = Buffer.concat([headBytes, wire.subarray(0, wireAt(cut.at))]);
    this.dead = true;
    const written = new Promise<void>((resolve) => this.socket.write(partial, () => resolve()));
    const breakIt = (): void => {
      if (cut.how === 'tcp-reset') resetAfter(this.socket, written);
      else this.socket.end();
    };
    if (cut.timing === 'apart') void pause(15).then(breakIt);
    else breakIt();
  }
}
