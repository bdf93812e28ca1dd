/**
 * What a benchmark started outside its own process (JVMs, HAProxy, a feed in its own process group) is ended
 * also when the benchmark is interrupted: each start registers a synchronous teardown here, and SIGINT, SIGTERM
 * or an uncaught exit run the ones still registered, newest first, by pid. A normal stop unregisters its own.
 */
const pending = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const fn of [...pending].reverse()) {
    pending.delete(fn);
    try {
      fn();
    } catch {
      // Best effort: the others still run.
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.once('exit', runAll);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: tearing down what the benchmark started\n`);
      runAll();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** Registers `fn` (synchronous: it may run in an exit handler); returns the function that unregisters it. */
export function onTeardown(fn: () => void): () => void {
  install();
  pending.add(fn);
  return () => void pending.delete(fn);
}
