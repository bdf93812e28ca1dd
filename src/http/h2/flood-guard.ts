/**
 * The rules that keep a server from making a connection hold or do without bound what it asks for (RFC 9113
 * 10.5): acknowledgements it does not read, and header blocks it never ends. Pure counters, no I/O: the session
 * (session.ts) tells them what happened and closes the connection when one says no.
 */

/**
 * The most PING and SETTINGS acknowledgements owed to a server that has not taken them: nghttp2's default
 * (`max_outbound_ack`).
 */
export const maxOutstandingAcks = 1000;

/**
 * The most CONTINUATION frames one header block may have. Bytes alone do not bound it: empty frames add nothing
 * to the block's size but each is a frame to read and a part to keep (nghttp2 bounds the count since
 * CVE-2024-28182, to 8). 32: an answer's whole header list (64 KiB at most, see `defaultMaxHeaderListSize`) fits
 * in 4 frames of the smallest SETTINGS_MAX_FRAME_SIZE, so a server needs 32 only if it splits its blocks eight
 * times finer than any server we know does; the parts kept stay a few dozen.
 */
export const maxContinuations = 32;

/**
 * The acknowledgements (PING and SETTINGS ACK) the connection owes and the server has not taken: queued in the
 * connection's out buffer, or handed to a socket that has more than it wants (its last write said so) and not
 * yet drained to the kernel. A server that asks for more than `max` of them without reading is flooding. Counted
 * as what is outstanding, not per read or per write: a server that pings with every answer (gRPC's bandwidth
 * probe does) and reads what it is sent is no flood however busy the connection is, and one that stops reading
 * is one whatever turn its PINGs arrive in.
 */
export class AckBacklog {
  /** Queued in the out buffer, not handed to the socket. */
  private queued = 0;
  /** Handed to the socket in writes it did not take within its high-water mark, before its next 'drain'. */
  private writing = 0;

  constructor(private readonly max = maxOutstandingAcks) {}

  /** One more acknowledgement queued; false once more than `max` are outstanding. */
  add(): boolean {
    this.queued++;
    return this.queued + this.writing <= this.max;
  }

  /** What was queued is handed to the socket; `taken`: its write said it has room for more. */
  handed(taken: boolean): void {
    if (taken) this.writing = 0;
    else this.writing += this.queued;
    this.queued = 0;
  }

  /** The socket drained: all it was handed went to the kernel, which the server reads from. */
  drained(): void {
    this.writing = 0;
  }

  get outstanding(): number {
    return this.queued + this.writing;
  }
}
