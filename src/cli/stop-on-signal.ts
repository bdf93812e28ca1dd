import { exitCodeOfSignal } from './exit-codes.js';

/** How a command answers SIGINT and SIGTERM while it runs. */
export interface StopOnSignalOptions {
  /** Written to stderr at the first signal, on a line of its own (the progress line may be mid-draw); nothing when absent. */
  message?: string;
  /** Whether a second signal quits at once, with the first signal's exit code, rather than waiting for the clean stop. Default true. */
  quitOnSecond?: boolean;
}

/** The listeners stopOnSignal installed, and what they saw. */
export interface SignalStop {
  /** The first signal received; undefined until one came. The command's exit code follows it (exitCodeOfSignal). */
  readonly signalled: NodeJS.Signals | undefined;
  /** Removes the listeners: after the run a signal ends the process as it would without them. */
  release(): void;
}

/**
 * Turns the first SIGINT or SIGTERM into `controller.abort()`: the run stops cleanly (in-flight operations
 * finished, checkpoint written). A service manager's stop (SIGTERM) gets the same stop as Ctrl-C.
 */
export function stopOnSignal(controller: AbortController, options: StopOnSignalOptions = {}): SignalStop {
  const quitOnSecond = options.quitOnSecond ?? true;
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled !== undefined) {
      if (quitOnSecond) process.exit(exitCodeOfSignal(signalled));
      return;
    }
    signalled = signal;
    if (options.message !== undefined) process.stderr.write(`\n${options.message}\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    get signalled() {
      return signalled;
    },
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
