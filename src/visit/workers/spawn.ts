import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts a worker whose entry is a module beside this one. From dist/ (an installed package) the entry is a .js
 * file; from src/ in a clone it is a .ts file, and the worker registers tsx (a devDependency there) before
 * importing it: `execArgv: ['--import', 'tsx']` is not honoured by worker threads on Node 20. Kept to
 * src/visit/workers so that the visit does not depend on the feed's workers.
 */
export function spawnWorker(name: string, workerData: unknown): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry, { workerData });
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
