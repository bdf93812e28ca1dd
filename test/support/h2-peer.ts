import net, { type AddressInfo } from 'node:net';
import { HpackDecoder } from '../../src/http/h2/hpack.js';

/**
 * An HTTP/2 server that is no server: a raw TCP listener whose test writes whatever frames it likes, in any
 * order, with any length, flags or stream id, and reads what the client sent frame by frame. It is the hostile
 * peer the client must survive (node:http2, the other peer of the tests, refuses to misbehave). Its framing is
 * its own, written from RFC 9113 and not shared with the client under test; only the client's request headers are
 * read back through the client's own HPACK decoder (a table that follows every block in order), since what they
 * say is checked against node:http2 elsewhere.
 */

export const FrameType = {
  Data: 0x0,
  Headers: 0x1,
  Priority: 0x2,
  RstStream: 0x3,
  Settings: 0x4,
  PushPromise: 0x5,
  Ping: 0x6,
  Goaway: 0x7,
  WindowUpdate: 0x8,
  Continuation: 0x9,
} as const;

export const Flag = { EndStream: 0x1, Ack: 0x1, EndHeaders: 0x4, Padded: 0x8, Priority: 0x20 } as const;

export const ErrorCode = {
  NoError: 0x0,
  ProtocolError: 0x1,
  InternalError: 0x2,
  FlowControlError: 0x3,
  SettingsTimeout: 0x4,
  StreamClosed: 0x5,
  FrameSizeError: 0x6,
  RefusedStream: 0x7,
  Cancel: 0x8,
  CompressionError: 0x9,
  EnhanceYourCalm: 0xb,
} as const;

export const Setting = {
  HeaderTableSize: 0x1,
  EnablePush: 0x2,
  MaxConcurrentStreams: 0x3,
  InitialWindowSize: 0x4,
  MaxFrameSize: 0x5,
  MaxHeaderListSize: 0x6,
} as const;

const clientPreface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A frame the client sent. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

/** A request as the client sent it: its stream, its decoded header fields, and whether HEADERS ended the stream. */
export interface PeerRequest {
  id: number;
  headers: Record<string, string>;
  endStream: boolean;
}

/** An HPACK integer (RFC 7541, 5.1) with `prefix` bits, the bits above them set from `first`. */
export function hpackInt(value: number, prefix: number, first = 0): Buffer {
  const mask = (1 << prefix) - 1;
  if (value < mask) return Buffer.from([first | value]);
  const out = [first | mask];
  value -= mask;
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
  return Buffer.from(out);
}

/**
 * A header block of literal fields without indexing and with a literal name (RFC 7541, 6.2.2), no Huffman: it
 * leaves no state in the client's table, and carries any bytes a test wants (upper case, CR, NUL...) unchanged.
 */
export function literalBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0x00]), hpackInt(n.length, 7), n, hpackInt(v.length, 7), v);
  }
  return Buffer.concat(parts);
}

export function frameBytes(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId >>> 0, 5);
  return Buffer.concat([head, payload]);
}

function u32(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, 4 * i));
  return b;
}

interface Waiter {
  match: (f: Frame) => boolean;
  resolve: (f: Frame) => void;
  reject: (err: Error) => void;
}

/** One connection the client opened, from the server's side. */
export class PeerConnection {
  /** Every frame the client sent after its preface, in order. */
  readonly frames: Frame[] = [];
  /** The client sent its FIN. */
  ended = false;
  /** The socket is closed (either side). */
  closed = false;
  /** Resolves when the socket closes, whoever closed it. */
  readonly whenClosed: Promise<void>;
  private buffered = Buffer.alloc(0);
  private prefaceSeen = false;
  private readonly taken = new Set<Frame>();
  private waiters: Waiter[] = [];
  private readonly decoder = new HpackDecoder();
  /** Header blocks decoded, by the HEADERS frame that opened them. */
  private readonly blocks = new Map<Frame, string[]>();
  private open: { first: Frame; parts: Buffer[] } | undefined;

  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('end', () => {
      this.ended = true;
    });
    // A client that resets the connection is one of the outcomes the tests look for, not a failure of the peer.
    socket.on('error', () => undefined);
    this.whenClosed = new Promise((resolve) => {
      socket.on('close', () => {
        this.closed = true;
        const waiting = this.waiters;
        this.waiters = [];
        for (const w of waiting) w.reject(new Error('the connection closed before the frame came'));
        resolve();
      });
    });
  }

  private onData(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    if (!this.prefaceSeen) {
      if (this.buffered.length < clientPreface.length) return;
      if (!this.buffered.subarray(0, clientPreface.length).equals(clientPreface)) {
        this.socket.destroy();
        return;
      }
      this.prefaceSeen = true;
      this.buffered = this.buffered.subarray(clientPreface.length);
    }
    while (this.buffered.length >= 9) {
      const length = this.buffered.readUIntBE(0, 3);
      if (this.buffered.length < 9 + length) break;
      const frame: Frame = {
        type: this.buffered[3],
        flags: this.buffered[4],
        streamId: this.buffered.readUInt32BE(5) & 0x7fffffff,
        payload: Buffer.from(this.buffered.subarray(9, 9 + length)),
      };
      this.buffered = this.buffered.subarray(9 + length);
      this.readHeaderBlock(frame);
      this.frames.push(frame);
      for (const w of [...this.waiters]) {
        if (!this.taken.has(frame) && w.match(frame)) {
          this.taken.add(frame);
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    }
  }

  /** Follows the client's header blocks, so its HPACK table is followed too. */
  private readHeaderBlock(f: Frame): void {
    if (f.type === FrameType.Headers) {
      let start = 0;
      let end = f.payload.length;
      if (f.flags & Flag.Padded) {
        end -= f.payload[0];
        start = 1;
      }
      if (f.flags & Flag.Priority) start += 5;
      this.open = { first: f, parts: [f.payload.subarray(start, end)] };
    } else if (f.type === FrameType.Continuation && this.open !== undefined) this.open.parts.push(f.payload);
    else return;
    if ((f.flags & Flag.EndHeaders) === 0) return;
    const { first, parts } = this.open;
    this.open = undefined;
    this.blocks.set(first, this.decoder.decode(Buffer.concat(parts)));
  }

  /** The first frame the client sent (or sends) that matches and that no earlier call took. */
  take(match: (f: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find((f) => !this.taken.has(f) && match(f));
    if (seen !== undefined) {
      this.taken.add(seen);
      return Promise.resolve(seen);
    }
    if (this.closed) return Promise.reject(new Error('the connection is closed'));
    return new Promise((resolve, reject) => this.waiters.push({ match, resolve, reject }));
  }

  /** The next request the client opened a stream with (its HEADERS, after any CONTINUATION). */
  async request(): Promise<PeerRequest> {
    const f = await this.take((x) => x.type === FrameType.Headers);
    if (!this.blocks.has(f))
      await this.take(
        (x) => x.type === FrameType.Continuation && x.streamId === f.streamId && (x.flags & Flag.EndHeaders) !== 0,
      );
    const list = this.blocks.get(f)!;
    const headers: Record<string, string> = {};
    for (let i = 0; i < list.length; i += 2) headers[list[i]] = list[i + 1];
    return { id: f.streamId, headers, endStream: (f.flags & Flag.EndStream) !== 0 };
  }

  /** Body bytes the client has sent on a stream so far, and whether END_STREAM came. */
  body(streamId: number): { bytes: number; ended: boolean } {
    let bytes = 0;
    let ended = false;
    for (const f of this.frames) {
      if (f.streamId !== streamId) continue;
      if (f.type === FrameType.Data) {
        bytes += f.flags & Flag.Padded ? f.payload.length - 1 - f.payload[0] : f.payload.length;
        ended ||= (f.flags & Flag.EndStream) !== 0;
      } else if (f.type === FrameType.Headers) ended ||= (f.flags & Flag.EndStream) !== 0;
    }
    return { bytes, ended };
  }

  /** Reads the client's SETTINGS, then sends ours (`settings`) and the ACK of theirs: the server's side of the preface. */
  async handshake(settings: readonly (readonly [number, number])[] = []): Promise<Frame> {
    const theirs = await this.take((f) => f.type === FrameType.Settings && (f.flags & Flag.Ack) === 0);
    this.settings(settings);
    this.settingsAck();
    return theirs;
  }

  write(...bytes: Buffer[]): boolean {
    if (this.socket.destroyed) return false;
    return this.socket.write(bytes.length === 1 ? bytes[0] : Buffer.concat(bytes));
  }

  frame(type: number, flags: number, streamId: number, payload?: Buffer): this {
    this.write(frameBytes(type, flags, streamId, payload));
    return this;
  }

  settings(settings: readonly (readonly [number, number])[] = []): this {
    const payload = Buffer.alloc(6 * settings.length);
    settings.forEach(([id, value], i) => {
      payload.writeUInt16BE(id, 6 * i);
      payload.writeUInt32BE(value >>> 0, 6 * i + 2);
    });
    return this.frame(FrameType.Settings, 0, 0, payload);
  }

  settingsAck(): this {
    return this.frame(FrameType.Settings, Flag.Ack, 0);
  }

  /**
   * A HEADERS frame: `fields` as literals, or a block given as bytes. `endHeaders` false leaves the block open
   * for CONTINUATION frames; `pad` adds that many bytes of padding.
   */
  headers(
    streamId: number,
    fields: readonly (readonly [string, string])[] | Buffer,
    options: { endStream?: boolean; endHeaders?: boolean; pad?: number } = {},
  ): this {
    const block = Buffer.isBuffer(fields) ? fields : literalBlock(fields);
    let flags = (options.endStream ? Flag.EndStream : 0) | (options.endHeaders === false ? 0 : Flag.EndHeaders);
    let payload = block;
    if (options.pad !== undefined) {
      flags |= Flag.Padded;
      payload = Buffer.concat([Buffer.from([options.pad]), block, Buffer.alloc(options.pad)]);
    }
    return this.frame(FrameType.Headers, flags, streamId, payload);
  }

  continuation(streamId: number, block: Buffer, endHeaders: boolean): this {
    return this.frame(FrameType.Continuation, endHeaders ? Flag.EndHeaders : 0, streamId, block);
  }

  data(streamId: number, payload: Buffer | string, options: { endStream?: boolean; pad?: number } = {}): this {
    let bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    let flags = options.endStream ? Flag.EndStream : 0;
    if (options.pad !== undefined) {
      flags |= Flag.Padded;
      bytes = Buffer.concat([Buffer.from([options.pad]), bytes, Buffer.alloc(options.pad)]);
    }
    return this.frame(FrameType.Data, flags, streamId, bytes);
  }

  /** A whole answer: `:status` (and `fields`) in one HEADERS frame, then the body in one DATA frame. */
  respond(
    streamId: number,
    status: number | string,
    body?: string,
    fields: readonly (readonly [string, string])[] = [],
  ): this {
    this.headers(streamId, [[':status', String(status)], ...fields], { endStream: body === undefined });
    if (body !== undefined) this.data(streamId, body, { endStream: true });
    return this;
  }

  rst(streamId: number, code: number): this {
    return this.frame(FrameType.RstStream, 0, streamId, u32(code));
  }

  goaway(lastStreamId: number, code: number): this {
    return this.frame(FrameType.Goaway, 0, 0, u32(lastStreamId, code));
  }

  windowUpdate(streamId: number, increment: number): this {
    return this.frame(FrameType.WindowUpdate, 0, streamId, u32(increment));
  }

  ping(data = Buffer.alloc(8), ack = false): this {
    return this.frame(FrameType.Ping, ack ? Flag.Ack : 0, 0, data);
  }

  /** The GOAWAY the client sent, if any: its last stream id and error code. */
  goawaySent(): { lastStreamId: number; code: number } | undefined {
    const f = this.frames.find((x) => x.type === FrameType.Goaway);
    return f === undefined
      ? undefined
      : { lastStreamId: f.payload.readUInt32BE(0) & 0x7fffffff, code: f.payload.readUInt32BE(4) };
  }

  /** Waits for the client's GOAWAY. */
  async whenGoaway(): Promise<{ lastStreamId: number; code: number }> {
    await this.take((f) => f.type === FrameType.Goaway);
    return this.goawaySent()!;
  }

  /** Waits for the client's RST_STREAM on `streamId` and returns its error code. */
  async reset(streamId: number): Promise<number> {
    const f = await this.take((x) => x.type === FrameType.RstStream && x.streamId === streamId);
    return f.payload.readUInt32BE(0);
  }

  /** Stops reading: the client's writes fill the socket buffers on both sides, and then its own. */
  stopReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }

  /** Closes with a TCP RST. */
  resetTcp(): void {
    this.socket.resetAndDestroy();
  }

  end(): void {
    this.socket.end();
  }
}

/** A listener on 127.0.0.1 whose connections are the test's to script. */
export class Peer {
  readonly connections: PeerConnection[] = [];
  private handedOut = 0;
  private waiting: ((c: PeerConnection) => void)[] = [];

  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {
    server.on('connection', (socket) => {
      const c = new PeerConnection(socket);
      this.connections.push(c);
      const w = this.waiting.shift();
      if (w !== undefined) {
        this.handedOut++;
        w(c);
      }
    });
  }

  static async start(): Promise<Peer> {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return new Peer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** The next connection the client opens (in the order they arrive), once it is accepted. */
  next(): Promise<PeerConnection> {
    if (this.handedOut < this.connections.length) return Promise.resolve(this.connections[this.handedOut++]);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The next connection, with the preface exchanged (`settings` are the server's). */
  async accept(settings: readonly (readonly [number, number])[] = []): Promise<PeerConnection> {
    const c = await this.next();
    await c.handshake(settings);
    return c;
  }

  close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
