import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** A WebAssembly module of one function (a loop), as bytes. */
const wasmBytes = [
  0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 6, 1, 0x60, 1, 0x7f, 1, 0x7f, 3, 2, 1, 0, 7, 5, 1, 1, 0x66, 0, 0, 0x0a, 0x1b, 1,
  0x19, 1, 1, 0x7f, 3, 0x40, 0x20, 1, 0x20, 0, 0x6a, 0x21, 1, 0x20, 0, 0x41, 1, 0x6b, 0x22, 0, 0x0d, 0, 0x0b, 0x20, 1,
  0x0b,
];

/**
 * What a process that calls liftoffOnlyBeforeWasm() and then compiles WebAssembly (`how`) reports, in a process of
 * its own since V8's flags are the process's: which built-in modules Node compiled without their code cache (a V8
 * flag changed at run time makes it reject them) before and after the compile, and what the compile gave.
 */
function run(how: 'Module' | 'compile' | 'instantiate' | 'worker'): {
  uncachedBefore: string[];
  uncachedAfter: string[];
  instance: boolean;
  restored: boolean;
  result: number;
} {
  const script = `
    import { createRequire } from 'node:module';
    const require = createRequire(import.meta.url);
    const { internalBinding } = require('internal/test/binding');
    const { liftoffOnlyBeforeWasm } = await import('./src/cli/liftoff-only.ts');
    const uncached = () => {
      const b = internalBinding('builtins');
      return [...(b.getCacheUsage ? b.getCacheUsage() : b).compiledWithoutCache];
    };
    const original = WebAssembly.Module;
    liftoffOnlyBeforeWasm();
    require('node:net');
    require('node:assert');
    const uncachedBefore = uncached();
    const bytes = new Uint8Array(${JSON.stringify(wasmBytes)});
    let module;
    if ('${how}' === 'Module') module = new WebAssembly.Module(bytes);
    if ('${how}' === 'compile') module = await WebAssembly.compile(bytes);
    if ('${how}' === 'instantiate') module = (await WebAssembly.instantiate(bytes)).module;
    if ('${how}' === 'worker') {
      const { Worker } = require('node:worker_threads');
      await new Promise((resolve) => new Worker('0', { eval: true }).on('exit', resolve));
      // Set by the worker's start alone: WebAssembly is compiled only below.
      require('node:perf_hooks');
      module = new WebAssembly.Module(bytes);
    }
    require('node:perf_hooks');
    console.log(JSON.stringify({
      uncachedBefore,
      uncachedAfter: uncached(),
      instance: module instanceof WebAssembly.Module && module instanceof original,
      restored: WebAssembly.Module === original,
      result: new WebAssembly.Instance(module).exports.f(10),
    }));`;
  return JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-internals', '--no-warnings', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repo, encoding: 'utf8' },
    ),
  ) as ReturnType<typeof run>;
}

describe('liftoffOnlyBeforeWasm', () => {
  it('leaves V8 flags as they are until WebAssembly is compiled: built-in modules load from their code cache', () => {
    const r = run('Module');
    expect(r.uncachedBefore).toEqual([]);
  });

  // The flag set is what makes V8 reject the caches of built-in modules loaded after it: perf_hooks here.
  it.each(['Module', 'compile', 'instantiate', 'worker'] as const)(
    'sets the flag before the first compile (%s), which compiles as before, and puts WebAssembly back as it was',
    (how) => {
      const r = run(how);
      expect(r.uncachedAfter).toContain('perf_hooks');
      expect(r).toMatchObject({ instance: true, restored: true, result: 55 });
    },
  );
});
