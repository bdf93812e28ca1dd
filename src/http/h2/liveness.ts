/**
 * Whether a connection with requests on it is alive (as Go's x/net/http2 `ReadIdleTimeout` and `PingTimeout`):
 * after `readIdleMs` with requests waiting and nothing read, the connection sends a PING of its own; nothing
 * read within `pingTimeoutMs` after it, and it is dead. A pure rule: the session (session.ts) calls `check` from
 * its timer with the bytes it has read so far, and sends the PING or closes the connection as told. Reading
 * anything at all, the PING's ACK among it, is a sign of life: the rule needs no look at the frames, and nothing
 * on the path of each frame.
 *
 * Without it, a connection whose server stopped answering without a FIN or RST (a black-holed path, a node
 * frozen, an L4 balancer that dropped the flow) holds its requests until each one's own deadline, and the pool,
 * which sees its streams open, keeps giving it more.
 */

/**
 * 5 s of silence with requests waiting before the connection asks: the container answers a document operation
 * within milliseconds, and its longest quiet times (a visit's slice scanning for matches, a GC pause) last
 * seconds; one PING each 5 s of such silence costs the server nothing (no server's ping-rate bound is near it).
 */
export const defaultReadIdleMs = 5_000;

/**
 * 5 s for the answer to our PING, which a live server sends ahead of its streams' data (RFC 9113 6.7): a
 * connection that answers nothing for 10 s with requests waiting is declared dead, much sooner than an
 * operation's deadline, and a stop-the-world pause of the container longer than 5 s is rare.
 */
export const defaultPingTimeoutMs = 5_000;

export const enum LivenessStep {
  /** Nothing to do. */
  None,
  /** Send a PING. */
  Ping,
  /** Dead: the PING went unanswered. */
  Dead,
}

export class Liveness {
  /** `bytesRead` at the last check. */
  private lastRead = 0;
  /** When the connection last showed it reads, or had nothing to wait for. */
  private quietSince: number;
  /** When our PING was sent; -1: none unanswered. */
  private pingAt = -1;

  constructor(
    readonly readIdleMs: number,
    readonly pingTimeoutMs: number,
    now: number,
  ) {
    this.quietSince = now;
  }

  /** How often `check` should run for the steps to be taken within a quarter of their times. */
  get checkEveryMs(): number {
    return Math.max(10, Math.min(this.readIdleMs, this.pingTimeoutMs) / 4);
  }

  /** `waiting`: requests are open on the connection. */
  check(now: number, bytesRead: number, waiting: boolean): LivenessStep {
    if (bytesRead !== this.lastRead || !waiting) {
      this.lastRead = bytesRead;
      this.quietSince = now;
      this.pingAt = -1;
      return LivenessStep.None;
    }
    if (this.pingAt >= 0) return now - this.pingAt >= this.pingTimeoutMs ? LivenessStep.Dead : LivenessStep.None;
    if (now - this.quietSince < this.readIdleMs) return LivenessStep.None;
    this.pingAt = now;
    return LivenessStep.Ping;
  }
}
