/**
 * The progress line on stderr: redrawn in place on a TTY, a plain line every few seconds otherwise, so logs
 * of unattended runs stay readable. Honours NO_COLOR.
 */
export interface ProgressOptions {
  stream?: NodeJS.WriteStream | NodeJS.WritableStream;
  /** How often a line is printed when stderr is not a TTY. */
  plainIntervalMs?: number;
  /** How often the line is redrawn on a TTY. */
  ttyIntervalMs?: number;
  /** Force TTY or plain mode (tests). */
  tty?: boolean;
  /** false disables output entirely (--quiet). */
  enabled?: boolean;
}

export const useColor = (stream: { isTTY?: boolean }): boolean =>
  Boolean(stream.isTTY) && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === '');

export class ProgressLine {
  private readonly stream: NodeJS.WritableStream & { isTTY?: boolean };
  private readonly tty: boolean;
  private timer: NodeJS.Timeout | undefined;
  private lastLength = 0;

  constructor(private readonly render: () => string, options: ProgressOptions = {}) {
    this.stream = (options.stream ?? process.stderr) as NodeJS.WritableStream & { isTTY?: boolean };
    this.tty = options.tty ?? Boolean(this.stream.isTTY);
    if (options.enabled === false) return;
    const interval = this.tty ? (options.ttyIntervalMs ?? 250) : (options.plainIntervalMs ?? 5_000);
    this.timer = setInterval(() => this.draw(), interval);
    this.timer.unref();
  }

  draw(): void {
    const line = this.render();
    if (this.tty) {
      const pad = this.lastLength > line.length ? ' '.repeat(this.lastLength - line.length) : '';
      this.stream.write(`\r${line}${pad}`);
      this.lastLength = line.length;
    } else {
      this.stream.write(`${line}\n`);
    }
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

export function formatRate(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return n.toFixed(n >= 100 ? 0 : 1);
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(r).padStart(2, '0')}s` : `${r}s`;
}
