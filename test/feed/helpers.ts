import { afterEach } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import type { FaultSettings } from '../../src/simulator/faults.js';
import { tempDir } from '../support/temp-dir.js';
import { noFaults } from '../faults/harness.js';

export { tempDir };

export type Op = Record<string, unknown>;

/** Expected store after applying `ops` in order (put, assign-only update, remove; no conditions). */
export function expectedStore(ops: Op[]): Map<string, Record<string, unknown>> {
  const store = new Map<string, Record<string, unknown>>();
  for (const op of ops) {
    const putId = (op.put ?? op.id) as string | undefined;
    if (putId !== undefined) store.set(putId, { ...(op.fields as object) });
    else if (op.update !== undefined) {
      const id = op.update as string;
      const doc = store.get(id) ?? (op.create ? {} : undefined);
      if (doc === undefined) continue;
      for (const [k, v] of Object.entries(op.fields as Record<string, { assign: unknown }>)) {
        if (v.assign === null) delete doc[k];
        else doc[k] = v.assign;
      }
      store.set(id, doc);
    } else if (op.remove !== undefined) store.delete(op.remove as string);
  }
  return store;
}

/**
 * Ids in every form, with characters that need encoding in a path. Only what /document/v1 can carry: the service
 * refuses a segment that decodes to '.' or '..', and reads the path's number as unsigned (no negative `n`).
 */
export const awkwardIds = [
  'id:ns:music::plain',
  'id:ns:music::with/slash:and:colon',
  'id:ns:music::plus+sign and space',
  'id:ns:music::percent%20literal',
  'id:ns:music::unicode-é-日本',
  'id:ns:music::./..',
  'id:ns:music:n=42:numbered',
  'id:ns:music:n=9223372036854775807:max',
  'id:ns:music:g=group one:grouped',
  'id:ns:music:g=g/2:x?y#z',
  'id:other:book::b1',
];

/**
 * Simulator document servers and temporary folders for one describe block, closed and removed after each test
 * (`later` adds anything else to close).
 */
export function useFeedFixtures(): {
  server: (faults?: Partial<FaultSettings>) => Promise<Awaited<ReturnType<typeof startDocumentServer>>>;
  dir: () => string;
  later: (cleanup: () => unknown) => void;
} {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return {
    async server(faults = {}) {
      const s = await startDocumentServer({ port: 0, faults: { ...noFaults, ...faults } });
      cleanups.push(() => s.close());
      return s;
    },
    dir() {
      const t = tempDir();
      cleanups.push(t.cleanup);
      return t.dir;
    },
    later: (cleanup) => cleanups.push(cleanup),
  };
}
