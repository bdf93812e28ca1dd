/**
 * The parts of undici this project runs on, loaded from their own files rather than the package root.
 *
 * `import 'undici'` loads fetch, WebSocket, the caches and the mock agents, and (through their reads of
 * `globalThis.File` and `globalThis.Headers`) Node's own bundled copy of undici as well: about 20 MB of a
 * feed's peak RSS against about 12 MB for these files (benchmarks/feed/run.ts `memory`). Should a later undici
 * move or hide these files, the root is loaded instead: larger, never broken.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

interface Parts {
  Dispatcher: typeof Undici.Dispatcher;
  Pool: typeof Undici.Pool;
  Client: typeof Undici.Client;
  Agent: typeof Undici.Agent;
  buildConnector: typeof Undici.buildConnector;
  getGlobalDispatcher: typeof Undici.getGlobalDispatcher;
}

function load(): Parts {
  try {
    const Dispatcher = require('undici/lib/dispatcher/dispatcher.js') as typeof Undici.Dispatcher;
    const parts: Parts = {
      Dispatcher,
      Pool: require('undici/lib/dispatcher/pool.js') as typeof Undici.Pool,
      Client: require('undici/lib/dispatcher/client.js') as typeof Undici.Client,
      Agent: require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent,
      buildConnector: require('undici/lib/core/connect.js') as typeof Undici.buildConnector,
      getGlobalDispatcher: (require('undici/lib/global.js') as { getGlobalDispatcher: typeof Undici.getGlobalDispatcher }).getGlobalDispatcher,
    };
    // The root attaches request/stream/pipeline/... to every dispatcher; without it they would be missing.
    const api = require('undici/lib/api/index.js') as { request?: unknown };
    // Files that are there but no longer what these names were: take the root.
    const dispatchers = [parts.Pool, parts.Client, parts.Agent].every((d) => typeof d === 'function' && d.prototype instanceof Dispatcher);
    if (dispatchers && typeof parts.buildConnector === 'function' && typeof parts.getGlobalDispatcher === 'function' && typeof api.request === 'function') {
      Object.assign(Dispatcher.prototype, api);
      return parts;
    }
  } catch {
    // Fall through to the root.
  }
  const root = require('undici') as typeof Undici;
  return {
    Dispatcher: root.Dispatcher,
    Pool: root.Pool,
    Client: root.Client,
    Agent: root.Agent,
    buildConnector: root.buildConnector,
    getGlobalDispatcher: root.getGlobalDispatcher,
  };
}

const parts = load();

/** The base class of every dispatcher, with undici's request API attached (this project's HTTP/2 pool extends it). */
export const Dispatcher = parts.Dispatcher;
export const Pool = parts.Pool;
export const Client = parts.Client;
export const Agent = parts.Agent;
export const buildConnector = parts.buildConnector;
/** The dispatcher undici's root `request` uses when none is given (the one `setGlobalDispatcher` set). */
export const getGlobalDispatcher = parts.getGlobalDispatcher;

/**
 * undici's root `request(url, options)` without the root: on `options.dispatcher`, or the global dispatcher
 * as the root's would use, with the origin and path taken from the URL and the method defaulting as there.
 */
export function request(url: URL, options: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Undici.Dispatcher.HttpMethod; dispatcher?: Dispatcher }): Promise<Undici.Dispatcher.ResponseData> {
  const { dispatcher = getGlobalDispatcher(), ...rest } = options;
  return dispatcher.request({
    ...rest,
    origin: url.origin,
    path: url.search ? `${url.pathname}${url.search}` : url.pathname,
    method: options.method ?? (options.body ? 'PUT' : 'GET'),
  });
}
export type Dispatcher = Undici.Dispatcher;
export type Pool = Undici.Pool;
export type Client = Undici.Client;
export type Agent = Undici.Agent;
