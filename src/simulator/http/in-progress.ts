import type { ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse, Http2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { AnyRequest, AnyResponse } from './http-response.js';

/*
 * Requests in progress: from the handler's start to the end of the response (written in full, or the
 * connection gone). The container's Jetty serves an HTTP/1.1 connection one request at a time: it parses a
 * pipelined request only once the previous response is completely written, so pipelining saves the client a
 * round trip but gives no concurrency. Node parses pipelined requests at once; here the ones that arrive while
 * another is in progress on their connection wait, in order, and start when it ends. HTTP/2 streams run
 * concurrently. The counts live on the socket or session (symbols), so each connection and each server has its
 * own; a server's totals live on its InProgress.
 */
const kInProgress = Symbol('inProgress');
const kWaiting = Symbol('waiting');
const kSession = Symbol('session');

interface Counted {
  [kInProgress]?: number;
}

interface Http1Connection extends Counted {
  /** Responses (their requests are `res.req`) parsed behind the one in progress, in arrival order. */
  [kWaiting]?: ServerResponse[];
}

type Http1Socket = Socket & Http1Connection;
type Http2Connection = Http2Session & Counted;
/** An HTTP/2 stream's session is gone by the time its response closes, so the response keeps it. */
type Http2Response = Http2ServerResponse & { [kSession]?: Http2Connection };

export type Handler = (req: AnyRequest, res: AnyResponse) => void;

/** The counts an InProgress has seen. */
export interface InProgressCounts {
  /** Requests in progress now. */
  inProgress: number;
  /** The most requests in progress at once, over all connections, since the start or the last reset. */
  maxInProgress: number;
  /** The most requests in progress at once on a single connection (1 for HTTP/1.1, as in the container). */
  maxInProgressOnOneConnection: number;
}

/** Serves HTTP/1.1 connections one request at a time, and counts the requests in progress; one per port. */
export class InProgress {
  private start: Handler = () => {};
  private now = 0;
  private max = 0;
  private maxOnOne = 0;
  // Built once per server and shared by every request (no closure per request).
  private readonly onHttp1Close = closeListener((res: ServerResponse) => this.endHttp1(res));
  private readonly onHttp2Close = closeListener((res: Http2Response) => this.endHttp2(res));

  /** The handler to give the port's servers: `start` behind the HTTP/1.1 order and the counts. */
  wrap(start: Handler): Handler {
    this.start = start;
    return (req, res) => {
      if (req.httpVersionMajor !== 1) this.beginHttp2(req as Http2ServerRequest, res as Http2Response);
      else {
        const socket = req.socket as Http1Socket;
        if (socket[kInProgress] === 1) (socket[kWaiting] ??= []).push(res as ServerResponse);
        else this.beginHttp1(socket, res as ServerResponse);
      }
    };
  }

  counts(): InProgressCounts {
    return { inProgress: this.now, maxInProgress: this.max, maxInProgressOnOneConnection: this.maxOnOne };
  }

  /** Starts the maxima afresh from what is in progress now. */
  reset(): void {
    this.max = this.now;
    this.maxOnOne = 0;
  }

  private begin(connection: Counted): void {
    const onConnection = (connection[kInProgress] ?? 0) + 1;
    connection[kInProgress] = onConnection;
    if (onConnection > this.maxOnOne) this.maxOnOne = onConnection;
    if (++this.now > this.max) this.max = this.now;
  }

  private beginHttp1(socket: Http1Socket, res: ServerResponse): void {
    this.begin(socket);
    // 'close' comes once per response: after 'finish' (written in full), or when the connection dies first.
    res.on('close', this.onHttp1Close);
    this.start(res.req, res);
  }

  private endHttp1(res: ServerResponse): void {
    const socket = res.req.socket as Http1Socket;
    socket[kInProgress] = 0;
    this.now--;
    const waiting = socket[kWaiting];
    if (waiting === undefined || waiting.length === 0) return;
    // A connection that died takes its waiting requests with it: they never started, so they hold nothing.
    if (socket.destroyed) waiting.length = 0;
    else this.beginHttp1(socket, waiting.shift()!);
  }

  private beginHttp2(req: Http2ServerRequest, res: Http2Response): void {
    const session: Http2Connection | undefined = req.stream.session;
    // A stream already gone has no session to count on; the handler still sees it (and finds it gone).
    if (session !== undefined) {
      this.begin(session);
      res[kSession] = session;
      res.on('close', this.onHttp2Close);
    }
    this.start(req, res);
  }

  private endHttp2(res: Http2Response): void {
    const session = res[kSession]!;
    session[kInProgress]!--;
    this.now--;
  }
}

/** An event listener that hands the emitter (its `this`) to `end`. */
function closeListener<R>(end: (res: R) => void): (this: R) => void {
  return function (this: R) {
    end(this);
  };
}
