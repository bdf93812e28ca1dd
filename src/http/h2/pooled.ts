import type { BodyFrame, RequestControl, ResponseHandler } from '../transport.js';
import type { TransportError } from '../transport-error.js';
import type { Choosable } from './connection-choice.js';
import type { H2Request, H2Session } from './session.js';

/** What a pooled request tells the pool it belongs to (the `Http2Transport`). */
export interface RequestOwner {
  /** Requests on a connection now. */
  inflight: number;
  /** A latency sample of `conn`: its answer's status (0: none within the bound), sent at `sentAt`. */
  sample(conn: PooledConnection, status: number, sentAt: number): void;
}

/** One connection as the pool sees it: its session, the choice's latency estimate, and where it is in its life. */
export class PooledConnection implements Choosable {
  session!: H2Session;
  cost = 0;
  sampledAt = 0;
  /** When it stops taking new streams (performance.now() ms); Infinity: never. */
  retireAt = Infinity;
  renewTimer: NodeJS.Timeout | undefined;
  /** In the pool's choice: ready, and not yet drained by the pool. */
  taking = false;
  /** Drained by the pool (renewed, or the pool closing): its close is no loss. */
  retired = false;
  /** A replacement is being opened for it. */
  renewing = false;
  /** The connection this one replaces, drained once this one is ready. */
  replaces: PooledConnection | undefined;
  /** Answers' headers, bodies' pieces and ends seen on it: whether a drain makes progress. */
  progress = 0;
  drainWatch: NodeJS.Timeout | undefined;
  /**
   * Its requests sent and without an answer's headers, oldest first, linked through the requests themselves (no
   * allocation): the first one's wait is what the choice reads of a connection that stopped answering.
   */
  firstUnanswered: PooledRequest | undefined;
  lastUnanswered: PooledRequest | undefined;
  /** Streams its close cut off: a connection closed with none (an idle close) is no lost node. */
  cut = 0;

  get unansweredSince(): number {
    return this.firstUnanswered === undefined ? Infinity : this.firstUnanswered.sentAt;
  }

  get active(): number {
    return this.session.active;
  }

  get room(): number {
    return this.session.room;
  }
}

/**
 * A request as the pool hands it to a session, and the handler the session calls: it takes the latency sample and
 * the drain's progress on the way to the caller's handler. One object per request, as the request alone was before.
 */
export class PooledRequest implements H2Request, ResponseHandler {
  readonly handler: ResponseHandler = this;
  refusals = 0;
  /** The connection it is on (undefined while it waits, and once it has ended), and when it was sent (performance.now() ms; 0 once its latency is taken). */
  conn: PooledConnection | undefined = undefined;
  sentAt = 0;
  /** When it last began to wait in the pool's queue (performance.now() ms). */
  queuedAt = 0;
  /** Its neighbours among its connection's unanswered requests (see `PooledConnection.firstUnanswered`). */
  prevUnanswered: PooledRequest | undefined = undefined;
  nextUnanswered: PooledRequest | undefined = undefined;

  constructor(
    private readonly pool: RequestOwner,
    readonly pseudo: readonly string[],
    readonly headers: readonly string[],
    readonly path: string,
    readonly body: Buffer | null,
    readonly bodyFrame: BodyFrame | undefined,
    readonly headersTimeout: number,
    readonly bodyTimeout: number,
    private readonly target: ResponseHandler,
  ) {}

  onStart(control: RequestControl): void {
    this.target.onStart?.(control);
  }

  onHeaders(status: number, headers: readonly string[]): void {
    const conn = this.conn!;
    conn.progress++;
    if (this.sentAt > 0) {
      this.pool.sample(conn, status, this.sentAt);
      answered(conn, this);
    }
    this.target.onHeaders(status, headers);
  }

  onData(chunk: Buffer): void {
    this.conn!.progress++;
    this.target.onData(chunk);
  }

  onComplete(): void {
    this.conn!.progress++;
    this.conn = undefined;
    this.pool.inflight--;
    this.target.onComplete();
  }

  onError(err: TransportError): void {
    const conn = this.conn;
    if (conn !== undefined) {
      conn.progress++;
      this.conn = undefined;
      this.pool.inflight--;
      // No answer within the bound: the clearest sign of a slow node there is.
      if (this.sentAt > 0 && err.failure === 'headers-timeout') this.pool.sample(conn, 0, this.sentAt);
      if (this.sentAt > 0) answered(conn, this);
      if (!conn.session.isOpen) conn.cut++;
    }
    this.target.onError(err);
  }
}

/** `req` is no longer among `conn`'s unanswered requests (its headers came, or it ended without them). */
export function answered(conn: PooledConnection, req: PooledRequest): void {
  const prev = req.prevUnanswered;
  const next = req.nextUnanswered;
  if (prev === undefined) conn.firstUnanswered = next;
  else prev.nextUnanswered = next;
  if (next === undefined) conn.lastUnanswered = prev;
  else next.prevUnanswered = prev;
  req.prevUnanswered = undefined;
  req.nextUnanswered = undefined;
  req.sentAt = 0;
}

/** A request's failure told to its handler; what the handler throws stays there, off the connection it came from. */
export function tell(handler: ResponseHandler, err: TransportError): void {
  try {
    handler.onError(err);
  } catch {
    // Nothing left to tell.
  }
}
