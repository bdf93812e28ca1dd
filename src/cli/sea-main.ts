/**
 * The single executable's main script (scripts/build-sea.mjs). It answers the top-level help itself and
 * otherwise runs the CLI's bundle (main.ts and all it imports), which the executable carries as an asset with
 * a code cache made after a one-document feed.
 *
 * Why two scripts: V8 reads a script's whole code cache before running any of it. The bundle's cache holds
 * what a feed compiles (about 1 MB), and reading it was a third of `--help`'s CPU, for a page drawn from a few
 * kilobytes of code (top-help.ts). This script's own cache holds only itself.
 */
import { getRawAsset } from 'node:sea';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { asksTopHelp, topHelp } from './top-help.js';

/** The assets' names, which the build writes (scripts/build-sea.mjs). */
const bundleAsset = 'vespa-bulk.js';
const bundleCacheAsset = `${bundleAsset}.cache`;

/**
 * Runs the bundle: a CommonJS module's function (the build wraps it as Node wraps a module), given Node's
 * parameters.
 */
function runBundle(): void {
  // The raw assets are the executable's own pages, not copies: a copy of the bundle cost 17 ms.
  const cache = getRawAsset(bundleCacheAsset) as ArrayBuffer;
  // Latin-1, not UTF-8: a copy of the bytes where UTF-8 decoding took 20 ms; the build writes the bundle in ASCII.
  const script = new Script(Buffer.from(getRawAsset(bundleAsset) as ArrayBuffer).toString('latin1'), {
    filename: bundleAsset,
    cachedData: cache.byteLength > 0 ? new Uint8Array(cache) : undefined,
  });
  // The build checks that V8 takes the cache (a rejected one costs a fifth of a feed's CPU, and says nothing).
  if (script.cachedDataRejected === true && process.env.VESPA_BULK_SEA_CACHE_CHECK === '1') process.exit(70);
  const module = { exports: {} };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(process.execPath),
    module,
    process.execPath,
    dirname(process.execPath),
  );
}

const argv = process.argv.slice(2);
if (asksTopHelp(argv)) process.stdout.write(`${topHelp()}\n`);
else runBundle();
