import { createRequire } from 'node:module';
import { getAsset, isSea } from 'node:sea';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on the module `name` beside the module `beside` (pass `import.meta.url`): `name.js` in
 * an installed package (dist/), `name.ts` when `beside` runs from the TypeScript sources (a clone, the tests). The
 * `.ts` entry is started through a bootstrap that registers tsx (a devDependency) first: worker threads on Node 20
 * do not honour `execArgv: ['--import', 'tsx']`, and bin/vespa-bulk.js does the same for the main thread.
 *
 * The one place a worker thread is started; the feed's and the visit's workers both go through it.
 */
export function spawnWorker(beside: string, name: string, workerData: unknown): Worker {
  // The single executable (scripts/build-sea.mjs) has no module files: it carries each worker's code, bundled into
  // one script, as the asset `name.js`.
  if (isSea()) return new Worker(getAsset(`${name}.js`, 'utf8'), { eval: true, workerData });
  const fromSource = beside.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, beside);
  if (!fromSource) return new Worker(entry, { workerData });
  return new Worker(tsxBootstrap(entry), { eval: true, workerData });
}

/**
 * Code for `new Worker(code, { eval: true })` that registers tsx's ESM loader and then imports `entry`. It takes
 * the ESM build of tsx's API beside the CommonJS one that `require.resolve` finds: the CommonJS `register()` cannot
 * load ESM hooks in a worker.
 */
function tsxBootstrap(entry: URL): string {
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  return `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
}
