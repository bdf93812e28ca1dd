import type { Socket } from 'node:net';
import { AckBacklog } from './flood-guard.js';
import { OutBuffer } from './out-buffer.js';

/**
 * Where a connection's frames go out: written in place into its `OutBuffer`, and handed to the socket once a
 * turn, in one write (corked where the buffer has several parts). It stops handing over while the socket holds
 * more than it wants (`full`) and goes on at 'drain', so that what waits for a server that does not read is
 * bounded by the flow-control windows and the streams open, not by what callers send; and it counts the
 * acknowledgements owed the server (flood-guard.ts) as they go out.
 */
export class FrameWriter {
  readonly out = new OutBuffer();
  /** The socket's last write said it holds enough: nothing more is handed over until 'drain'. */
  full = false;
  /** The connection is closed: nothing more is handed over. */
  closed = false;
  /** Hand-overs to the socket so far: a frame queued when it was n has left the process once it is above n. */
  handovers = 0;
  socket!: Socket;
  private scheduled = false;
  private readonly acks = new AckBacklog();
  private readonly flushNow = (): void => this.flush();

  /** Queues a whole frame (a copy of `frame`). */
  queue(frame: Buffer): void {
    const out = this.out.reserve(frame.length);
    frame.copy(out, this.out.used);
    this.out.commit(this.out.used + frame.length);
    this.schedule();
  }

  /** Queues an acknowledgement the server asked for (PING, SETTINGS); false, and nothing queued, on a flood. */
  queueAck(frame: Buffer): boolean {
    if (!this.acks.add()) return false;
    this.queue(frame);
    return true;
  }

  /** What was written goes to the socket at the end of this turn. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flushNow);
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed || this.full) return;
    const parts = this.out.take();
    if (parts.length === 0) return;
    this.handovers++;
    const written = this.out.writing();
    const socket = this.socket;
    let more: boolean;
    if (parts.length === 1) more = socket.write(parts[0], written);
    else {
      more = true;
      socket.cork();
      for (let i = 0; i < parts.length; i++)
        more = socket.write(parts[i], i === parts.length - 1 ? written : undefined);
      socket.uncork();
    }
    this.acks.handed(more);
    if (!more) this.full = true;
  }

  /** The socket's 'drain': true when it was full and takes writes again. */
  drained(): boolean {
    this.acks.drained();
    if (!this.full || this.closed) return false;
    this.full = false;
    this.flush();
    return !this.full;
  }

  /** Everything queued, handed to the caller instead (the connection's last frames, or none). */
  takeAll(): Buffer[] {
    return this.out.take();
  }
}
