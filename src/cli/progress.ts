import { isTerminal, useColor } from './color.js';
import { formatProgress, type ProgressSnapshot } from './progress-format.js';

export { formatDuration, formatRate } from './progress-format.js';

/**
 * The progress line on stderr: redrawn in place on a terminal, fitted to its width (see progress-format.ts);
 * a plain line every few seconds otherwise (a pipe, a log file, TERM=dumb), so logs of unattended runs stay
 * readable.
 */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream | NodeJS.WritableStream;
  /** How often a line is printed when stderr is not a terminal. */
  plainIntervalMs?: number;
  /** How often the line is redrawn on a terminal. */
  ttyIntervalMs?: number;
  /** Force terminal or plain mode (tests). */
  tty?: boolean;
  /** false disables output entirely (--quiet). */
  enabled?: boolean;
}

export class ProgressLine {
  private readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  private readonly tty: boolean;
  private readonly color: boolean;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly snapshot: () => ProgressSnapshot,
    options: ProgressOptions = {},
  ) {
    this.stream = options.stream ?? process.stderr;
    this.tty = options.tty ?? isTerminal(this.stream);
    this.color = useColor(this.stream);
    if (options.enabled === false) return;
    const interval = this.tty ? (options.ttyIntervalMs ?? 250) : (options.plainIntervalMs ?? 5_000);
    this.timer = setInterval(() => this.draw(), interval);
    this.timer.unref();
  }

  draw(): void {
    if (this.tty) {
      // Read each time: the terminal may have been resized. Erase to the end rather than pad with spaces.
      const line = formatProgress(this.snapshot(), this.stream.columns ?? 80, this.color);
      this.stream.write(`\r${line}\x1b[K`);
    } else {
      this.stream.write(`${formatProgress(this.snapshot(), Number.POSITIVE_INFINITY, this.color)}\n`);
    }
  }

  /**
   * Prints a log line on the same stream without tearing the progress line: on a terminal the line is cleared
   * first and redrawn after, so the log line stands on its own row.
   */
  log(text: string): void {
    if (!this.tty || this.timer === undefined) {
      this.stream.write(`${text}\n`);
      return;
    }
    this.stream.write(`\r\x1b[K${text}\n`);
    this.draw();
  }

  /** Prints the final state once and stops. */
  stop(finalDraw = true): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (finalDraw) this.draw();
    if (this.tty) this.stream.write('\n');
  }
}

/**
 * The rate of a growing count since the previous call (the first call: since the start). With `whole` (the last
 * line of a run that ended) the mean over the whole run, which the summary also gives: a last second's rate
 * there would read as the run's.
 */
export function rateMeter(): (count: number, seconds: number, whole?: boolean) => number {
  let lastCount = 0;
  let lastSeconds = 0;
  let last = 0;
  return (count, seconds, whole = false) => {
    if (whole) return seconds > 0 ? count / seconds : 0;
    const dt = seconds - lastSeconds;
    // Two draws within a blink (the final one right after a timed one): keep the last rate.
    if (dt < 0.05) return last;
    last = (count - lastCount) / dt;
    lastCount = count;
    lastSeconds = seconds;
    return last;
  };
}
