/**
 * The names of the process warnings (`process.emitWarning`: MaxListenersExceededWarning, ...) emitted while `run`
 * ran, or on the ticks just after it: Node emits a warning on a later tick than the call that caused it.
 */
export async function warningsDuring(run: () => Promise<void>): Promise<string[]> {
  const names: string[] = [];
  const onWarning = (warning: Error): void => {
    names.push(warning.name);
  };
  process.on('warning', onWarning);
  try {
    await run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return names;
}
