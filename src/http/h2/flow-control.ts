import { ErrorCode } from './frame.js';
import { ConnectionError } from './errors.js';

/**
 * When received bytes are returned to the server (x/net/http2's inflow): once half the advertised window is
 * owed, in one WINDOW_UPDATE, so that a busy stream costs one such frame per half window, not one per DATA frame.
 */
export function windowUpdateDue(unacked: number, window: number): boolean {
  return unacked >= window / 2;
}

/**
 * The connection's receive window. Returned as the bytes are read, not as they arrive: a stream whose reader is
 * paused holds its share until it resumes, so this window bounds what all the streams together hold unread.
 */
export class ConnectionInflow {
  /** What the server may still send on the connection before our next WINDOW_UPDATE. */
  private available: number;
  /** Bytes read and not yet returned. */
  private unacked = 0;

  /**
   * @param window the window advertised (after the preface's WINDOW_UPDATE); never below the protocol's 65,535,
   *   which the server may send before it hears of ours.
   */
  constructor(
    private readonly window: number,
    initial: number,
  ) {
    this.available = initial;
  }

  /** `n` bytes of DATA arrived (padding included). Throws FLOW_CONTROL_ERROR past the window (RFC 9113 6.9.1). */
  receive(n: number): void {
    this.available -= n;
    if (this.available < 0)
      throw new ConnectionError(ErrorCode.FlowControlError, "DATA beyond the connection's flow-control window");
  }

  /** `n` bytes are read (or never will be); what to send as WINDOW_UPDATE now, 0 for nothing yet. */
  returned(n: number): number {
    this.unacked += n;
    if (!windowUpdateDue(this.unacked, this.window)) return 0;
    const increment = this.unacked;
    this.available += increment;
    this.unacked = 0;
    return increment;
  }
}
