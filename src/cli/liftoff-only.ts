import { setFlagsFromString } from 'node:v8';

/** The WebAssembly functions that compile a module, each called through a stand-in until the flag is set. */
const compiling = ['compile', 'compileStreaming', 'instantiate', 'instantiateStreaming'] as const;

/**
 * Sets V8's `--liftoff-only` (WebAssembly compiled by the baseline compiler alone, main.ts says why) just before
 * the process first compiles WebAssembly, or first starts a worker thread (whose own WebAssembly this thread
 * cannot see), rather than at start.
 *
 * V8 accepts a code cache only while its flags are the ones the cache was made with, and Node's built-in modules
 * (net, tls, http2, perf_hooks, fs/promises...) not in its start-up snapshot load from such caches: each one
 * loaded after a flag changed at run time is compiled from its source instead
 * (`internalBinding('builtins').getCacheUsage()` lists them). A command loads most of those after the start (its
 * module is imported when it runs), so a flag set at start made them all compile; HTTP/2 and the simulator
 * compile no WebAssembly, and then the flag is never set.
 *
 * Every WebAssembly module is still compiled with the flag set, as when it was set at start. The stand-ins (a Proxy, so `instanceof WebAssembly.Module`
 * and the functions' names and lengths stay as they are) put the originals back once the flag is set.
 */
export function liftoffOnlyBeforeWasm(): void {
  const wasm = (globalThis as { WebAssembly?: unknown }).WebAssembly as Record<string, unknown> | undefined;
  if (wasm === undefined) return;
  const originals = new Map<string, unknown>();
  let done = false;
  const set = (): void => {
    if (done) return;
    done = true;
    setFlagsFromString('--liftoff-only');
    for (const [name, original] of originals) wasm[name] = original;
    process.off('worker', set);
  };
  const Module = wasm.Module as (new (...args: unknown[]) => object) | undefined;
  if (typeof Module === 'function') {
    originals.set('Module', Module);
    const standIn: typeof Module = new Proxy(Module, {
      construct(target, args, newTarget) {
        set();
        return Reflect.construct(target, args, newTarget === standIn ? target : newTarget) as object;
      },
    });
    wasm.Module = standIn;
  }
  for (const name of compiling) {
    const original = wasm[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    wasm[name] = new Proxy(original as (...args: unknown[]) => unknown, {
      apply(target, self, args) {
        set();
        return Reflect.apply(target, self, args) as unknown;
      },
    });
  }
  // Node emits it as the worker's thread starts, long before the worker has loaded the code that could compile.
  process.on('worker', set);
}
