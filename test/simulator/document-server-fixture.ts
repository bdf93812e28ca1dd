import { Pool } from 'undici';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import {
  startDocumentServer,
  type DocumentServer,
  type DocumentServerOptions,
} from '../../src/simulator/document-api/document-server.js';
import { defaultFaultSettings } from '../../src/simulator/faults.js';
import { call, type Answer } from './call.js';

/** The document server of a test file, and a pool of connections to it. */
export interface DocumentServerFixture {
  /** The server; read it inside tests and hooks (it starts in the file's beforeAll). */
  readonly server: DocumentServer;
  readonly pool: Pool;
  /** One request over the pool (see call.ts). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
}

/**
 * Starts a document server for the test file's tests and closes it after them. Before each test the store is
 * emptied, the document types forgotten and the faults set back to the defaults, so no test sees another's.
 */
export function useDocumentServer(options: DocumentServerOptions, connections = 4): DocumentServerFixture {
  let server: DocumentServer | undefined;
  let pool: Pool | undefined;
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the document server starts in beforeAll: use it inside tests and hooks');
    return value;
  };
  beforeAll(async () => {
    server = await startDocumentServer({ port: 0, ...options });
    pool = new Pool(server.url, { connections });
  });
  afterAll(async () => {
    await pool?.close();
    await server?.close();
  });
  beforeEach(() => {
    const s = started(server);
    s.store.clear();
    s.setDocumentTypes(null);
    s.faults.set({ ...defaultFaultSettings });
  });
  return {
    get server() {
      return started(server);
    },
    get pool() {
      return started(pool);
    },
    call: (method, path, body, headers) => call(started(pool), method, path, body, headers),
  };
}
