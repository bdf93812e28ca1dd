/**
 * HTTP/2 framing (RFC 9113, section 4 and 6): frame types, flags, settings and error codes, the frame header,
 * and a reader that cuts a byte stream into frames. Pure.
 */

export const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const enum FrameType {
  Data = 0x0,
  Headers = 0x1,
  Priority = 0x2,
  RstStream = 0x3,
  Settings = 0x4,
  PushPromise = 0x5,
  Ping = 0x6,
  Goaway = 0x7,
  WindowUpdate = 0x8,
  Continuation = 0x9,
}

export const enum Flag {
  EndStream = 0x1,
  // SETTINGS and PING use bit 0 as ACK; DATA and HEADERS as END_STREAM (RFC 9113 §6).
  // eslint-disable-next-line @typescript-eslint/no-duplicate-enum-values
  Ack = 0x1,
  EndHeaders = 0x4,
  Padded = 0x8,
  Priority = 0x20,
}

export const enum Setting {
  HeaderTableSize = 0x1,
  EnablePush = 0x2,
  MaxConcurrentStreams = 0x3,
  InitialWindowSize = 0x4,
  MaxFrameSize = 0x5,
  MaxHeaderListSize = 0x6,
}

export const enum ErrorCode {
  NoError = 0x0,
  ProtocolError = 0x1,
  InternalError = 0x2,
  FlowControlError = 0x3,
  SettingsTimeout = 0x4,
  StreamClosed = 0x5,
  FrameSizeError = 0x6,
  RefusedStream = 0x7,
  Cancel = 0x8,
  CompressionError = 0x9,
  ConnectError = 0xa,
  EnhanceYourCalm = 0xb,
  InadequateSecurity = 0xc,
  Http11Required = 0xd,
}

const errorNames = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
];

/** The RFC's name of an error code, e.g. REFUSED_STREAM. */
export function errorName(code: number): string {
  return errorNames[code] ?? `error 0x${code.toString(16)}`;
}

export const frameHeaderLength = 9;
/** The frame size every peer accepts (SETTINGS_MAX_FRAME_SIZE's initial value). */
export const defaultMaxFrameSize = 16_384;
/** The initial flow-control window of a stream and of the connection. */
export const defaultWindow = 65_535;
export const maxWindow = 2 ** 31 - 1;

/** Writes a frame header at `at`. */
export function writeFrameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: FrameType,
  flags: number,
  streamId: number,
): void {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId, at + 5);
}

/** A whole frame with the given payload. */
export function frame(type: FrameType, flags: number, streamId: number, payload?: Buffer): Buffer {
  const length = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(frameHeaderLength + length);
  writeFrameHeader(out, 0, length, type, flags, streamId);
  payload?.copy(out, frameHeaderLength);
  return out;
}

/** A SETTINGS frame of `[id, value]` pairs (none: an ACK). */
export function settingsFrame(settings: readonly (readonly [Setting, number])[], ack = false): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return frame(FrameType.Settings, ack ? Flag.Ack : 0, 0, payload);
}

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const out = Buffer.allocUnsafe(frameHeaderLength + 4);
  writeFrameHeader(out, 0, 4, FrameType.WindowUpdate, 0, streamId);
  out.writeUInt32BE(increment, frameHeaderLength);
  return out;
}

export function rstStreamFrame(streamId: number, code: ErrorCode): Buffer {
  const out = Buffer.allocUnsafe(frameHeaderLength + 4);
  writeFrameHeader(out, 0, 4, FrameType.RstStream, 0, streamId);
  out.writeUInt32BE(code, frameHeaderLength);
  return out;
}

export function goawayFrame(lastStreamId: number, code: ErrorCode): Buffer {
  const out = Buffer.allocUnsafe(frameHeaderLength + 8);
  writeFrameHeader(out, 0, 8, FrameType.Goaway, 0, 0);
  out.writeUInt32BE(lastStreamId, frameHeaderLength);
  out.writeUInt32BE(code, frameHeaderLength + 4);
  return out;
}

/** Receives one frame: its payload is `buf[start, end)`, valid only during the call. */
export type OnFrame = (type: number, flags: number, streamId: number, buf: Buffer, start: number, end: number) => void;

/**
 * Cuts a byte stream into frames. A frame within one chunk is handed on as a range of that chunk (no copy,
 * no view), valid only during the call; only a frame split across chunks is gathered.
 */
export class FrameReader {
  private pending: Buffer | undefined;

  constructor(
    private readonly onFrame: OnFrame,
    /** The largest payload accepted (our SETTINGS_MAX_FRAME_SIZE); a larger one is a FRAME_SIZE_ERROR. */
    private readonly maxFrameSize = defaultMaxFrameSize,
  ) {}

  /** Feeds bytes; throws a `FrameSizeError` for a frame over the limit. */
  push(chunk: Buffer): void {
    let buf = chunk;
    if (this.pending !== undefined) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let at = 0;
    const end = buf.length;
    while (end - at >= frameHeaderLength) {
      const length = (buf[at] << 16) | (buf[at + 1] << 8) | buf[at + 2];
      if (length > this.maxFrameSize)
        throw new FrameSizeError(`a frame of ${length} bytes, above ${this.maxFrameSize}`);
      const total = frameHeaderLength + length;
      if (end - at < total) break;
      const type = buf[at + 3];
      const flags = buf[at + 4];
      const streamId = buf.readUInt32BE(at + 5) & 0x7fffffff;
      this.onFrame(type, flags, streamId, buf, at + frameHeaderLength, at + total);
      at += total;
    }
    // A copy: the chunk may be the socket's read buffer, written over by the next read.
    if (at < end) this.pending = Buffer.from(buf.subarray(at));
  }
}

export class FrameSizeError extends Error {}
