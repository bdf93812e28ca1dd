import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { visit } from '../../src/visit/visit.js';
import { startFaultFront, h2Codes, type Cut } from '../support/fault-front.js';
import { cuttingFront, faultsOf, isVisit, seededPicker } from '../support/cut-points.js';
import { overProtocols, protocolFlag } from '../support/protocols.js';
import { runCli, tempDir } from './harness.js';

/**
 * An export through the fault front writes every document exactly once, and its summary counts what is in the file:
 * for each way each protocol's answers break after their headers, with the library's `exportDocuments`; and the
 * user's case with the CLI (`visit --slices 4 -o FILE`): an endpoint that aborts 70 % of the streamed visit answers
 * after some documents (as a Go handler that panics with ErrAbortHandler: RST_STREAM(INTERNAL_ERROR) over HTTP/2,
 * the connection closed in a chunked answer over HTTP/1.1). Exit 0 only with everything in the file; a slice that
 * never gets through fails the export (exit 1) and is named, and the file still holds each document it has once.
 */

const documents = 1000;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function seeded(): Promise<DocumentServer> {
  const server = await startDocumentServer({ port: 0, visitChunkDocuments: 20 });
  cleanups.push(() => server.close());
  server.store.seed(
    Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::e${i}`, fields: { title: `t${i}`, n: i } })),
  );
  return server;
}

function dir(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
}

/** The ids of the documents in an export's file, in order; a line that is not a whole document fails. */
function idsIn(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      let d: { put?: string; id?: string; fields?: { n?: number } };
      try {
        d = JSON.parse(l) as typeof d;
      } catch {
        throw new Error(`a line of ${file} is not a whole document: ${l}`);
      }
      const id = d.put ?? d.id ?? '';
      expect(d.fields?.n, l).toBe(Number(id.slice('id:ns:music::e'.length)));
      return id;
    });
}

const allIds = (server: DocumentServer): string[] =>
  server.store
    .all()
    .map((d) => d.id)
    .sort();

describe.each(overProtocols)(
  'an export over $protocol whose visit answers are broken after their headers',
  ({ protocol }) => {
    it.each(faultsOf[protocol].map((fault, i) => ({ fault, seed: 7000 + i + (protocol === 'h2' ? 0 : 100) })))(
      '$fault.name (seed $seed): the file holds every document once, and the summary counts the file',
      async ({ fault, seed }) => {
        const server = await seeded();
        const front = await cuttingFront(server.url, fault, seed);
        cleanups.push(() => front.close());
        const output = join(dir(), 'out.jsonl');
        const summary = await exportDocuments({
          endpoint: front.url,
          protocol,
          namespace: 'ns',
          documentType: 'music',
          slices: 4,
          wantedDocumentCount: 100,
          output,
          requestTimeoutMs: 10_000,
          retry: { baseDelayMs: 1, maxDelayMs: 10, maxRetries: 40 },
          // An export that hangs fails here, not at the test's timeout.
          signal: AbortSignal.timeout(10_000),
        });
        const ids = idsIn(output);
        const why = `${fault.name}: cuts ${JSON.stringify(Object.fromEntries(front.where))}; summary ok ${summary.ok}, ${summary.documents} documents`;
        // The summary counts what is in the file.
        expect(summary.documents, why).toBe(ids.length);
        // Every document, once.
        expect(new Set(ids).size, why).toBe(ids.length);
        expect([...ids].sort(), why).toEqual(allIds(server));
        expect(summary.ok, why).toBe(true);
        expect(summary.protocol, why).toBe(protocol);
        expect(front.cuts.length, why).toBeGreaterThan(5);
      },
    );
  },
);

/** The user's endpoint: 70 % of the visit answers aborted after some documents (at the end of a document line, or inside one). */
function abortingScript(
  protocol: 'h2' | 'http1.1',
  seed: number,
  only?: (path: string) => boolean,
): (x: { method: string; path: string; status: number; body: Buffer }) => Cut | undefined {
  const pick = seededPicker(seed);
  return (x) => {
    if (!isVisit(x) || x.status !== 200 || (only !== undefined && !only(x.path))) return undefined;
    if (only === undefined && pick(100) >= 70) return undefined;
    const ends: number[] = [];
    for (let at = x.body.indexOf('\n{"put"'); at >= 0; at = x.body.indexOf('\n{"put"', at + 1)) ends.push(at + 1);
    const at =
      only !== undefined || ends.length === 0
        ? 0
        : pick(2) === 0
          ? ends[pick(ends.length)]
          : ends[pick(ends.length)] + 5;
    return protocol === 'h2'
      ? { at, how: 'rst', code: h2Codes.INTERNAL_ERROR }
      : { at, how: 'fin', framing: 'chunked' };
  };
}

describe.each(overProtocols)(
  'vespa-bulk visit --slices 4 -o FILE over $protocol against an endpoint that aborts answers part way',
  ({ protocol }) => {
    it('70 % of the streamed answers aborted after some documents: exit 0 with every document in the file once, the summary counting the file', async () => {
      const server = await seeded();
      const front = await startFaultFront(server.url, {
        script: abortingScript(protocol, protocol === 'h2' ? 11 : 12),
      });
      cleanups.push(() => front.close());
      const cwd = dir();
      const run = await runCli(
        [
          'visit',
          'ns/music',
          '-t',
          front.url,
          ...protocolFlag(protocol),
          '--slices',
          '4',
          '-o',
          'out.jsonl',
          '--quiet',
        ],
        { cwd },
      );
      const ids = idsIn(join(cwd, 'out.jsonl'));
      const why = `${front.cuts.length} answers aborted; exit ${run.code}; ${run.stderr.slice(0, 2000)}`;
      const summary = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(summary['http.protocol'], why).toBe(protocol);
      expect(summary['visit.document.count'], why).toBe(ids.length);
      expect(new Set(ids).size, why).toBe(ids.length);
      expect([...ids].sort(), why).toEqual(allIds(server));
      expect(summary['visit.ok'], why).toBe(true);
      expect(run.code, why).toBe(0);
      expect(front.cuts.length, why).toBeGreaterThan(3);
    });

    it("a slice whose every answer is aborted: exit 1 naming it, the file holding the other slices' documents once, the summary counting the file", async () => {
      const server = await seeded();
      // What slice 2 holds, from the simulator itself.
      const slice2 = new Set<string>();
      for await (const d of visit({
        endpoint: server.url,
        protocol,
        namespace: 'ns',
        documentType: 'music',
        slices: 4,
        sliceIds: [2],
      }))
        slice2.add(d.id);
      expect(slice2.size).toBeGreaterThan(0);
      const front = await startFaultFront(server.url, {
        script: abortingScript(protocol, 13, (path) => /[?&]sliceId=2(&|$)/.test(path)),
      });
      cleanups.push(() => front.close());
      const cwd = dir();
      const run = await runCli(
        [
          'visit',
          'ns/music',
          '-t',
          front.url,
          ...protocolFlag(protocol),
          '--slices',
          '4',
          '--max-retries',
          '2',
          '-o',
          'out.jsonl',
          '--quiet',
        ],
        { cwd },
      );
      const ids = idsIn(join(cwd, 'out.jsonl'));
      const why = `exit ${run.code}; ${run.stderr.slice(0, 2000)}`;
      expect(run.code, why).toBe(1);
      expect(run.stderr, why).toMatch(/slice 2 failed/);
      expect(run.stderr, why).not.toMatch(/slice [013] failed/);
      const summary = JSON.parse(run.stdout) as Record<string, unknown>;
      expect(summary['visit.ok'], why).toBe(false);
      expect(summary['visit.document.count'], why).toBe(ids.length);
      expect(new Set(ids).size, why).toBe(ids.length);
      expect([...ids].sort(), why).toEqual(allIds(server).filter((id) => !slice2.has(id)));
    });
  },
);
