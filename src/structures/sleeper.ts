/** One loop that waits until woken: a reader paused until there is room again, or a stop. */
export class Sleeper {
  private wake: (() => void) | undefined;

  /** Whether the loop is waiting now. */
  get sleeping(): boolean {
    return this.wake !== undefined;
  }

  /** Resolves at the next `wakeUp()`. */
  sleep(): Promise<void> {
    return new Promise((resolve) => (this.wake = resolve));
  }

  /** Wakes the waiting loop, if any. */
  wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
