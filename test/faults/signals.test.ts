import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { alternateProtocols, expectSpoke, protocolFlag } from '../support/protocols.js';
import { expectNothingLost, failureLines, mixedOperations, runCli, tempDir, writeJsonl } from './harness.js';

/**
 * SIGINT and SIGTERM at a random point of a feed and of a visit run by the CLI (child processes), then the
 * same work resumed: nothing is skipped. The point is drawn per run and named in any failure message. The two
 * signals take a protocol each, for the feed and for the visit.
 */
const signals = ['SIGINT', 'SIGTERM'] as const;

describe('stopped by a signal, then resumed', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  for (const { signal, protocol } of alternateProtocols(signals.map((signal) => ({ signal })))) {
    it(`feed over ${protocol}: ${signal} at a random point, then --resume: the store is complete`, async () => {
      const server = await startDocumentServer({ port: 0, faults: { maxOpsPerSecond: 4000, closeRate: 0.01 } });
      cleanups.push(() => server.close());
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const ops = mixedOperations(6000, signal);
      writeJsonl(join(dir, 'in.jsonl'), ops);
      // In the first 60 %: the rest (at least 0.6 s at 4,000/s) outlasts a signal's way to the process on a loaded machine.
      const stopAt = Math.floor(6000 * (0.1 + 0.5 * Math.random()));
      const why = `${signal} once ${stopAt} documents were stored`;

      const first = await runCli(
        [
          'feed',
          '-t',
          server.url,
          ...protocolFlag(protocol),
          '--quiet',
          '--checkpoint',
          'cp.json',
          '--failures',
          'f1.jsonl',
          'in.jsonl',
        ],
        {
          cwd: dir,
          stopWith: signal,
          stopWhen: () => server.store.size() >= stopAt,
        },
      );
      expect(first.signalled, why).toBe(true);
      expect(first.stderr, why).toMatch(/stopping/);
      // As shells report a process stopped by the signal: 130 after SIGINT, 143 after SIGTERM.
      expect(first.code, why).toBe(signal === 'SIGINT' ? 130 : 143);
      const s1 = JSON.parse(first.stdout);
      expectSpoke(s1, protocol);
      expect(s1['feeder.ok.count'], why).toBeLessThan(ops.length);
      expect(existsSync(join(dir, 'cp.json')), why).toBe(true);

      const second = await runCli(
        [
          'feed',
          '-t',
          server.url,
          ...protocolFlag(protocol),
          '--quiet',
          '--resume',
          'cp.json',
          '--failures',
          'f2.jsonl',
        ],
        { cwd: dir },
      );
      expect(second.code, `${why}: ${second.stderr}`).toBe(0);
      const s2 = JSON.parse(second.stdout);
      expectSpoke(s2, protocol);
      // Resumed from the first operation not finished: everything before it was done, everything after it is fed.
      expect(s2['feeder.skipped.count'] + s2['feeder.ok.count'], why).toBe(ops.length);
      expect(s2['feeder.skipped.count'], why).toBeLessThanOrEqual(s1['feeder.ok.count']);
      expect(failureLines(join(dir, 'f1.jsonl'))).toEqual([]);
      expectNothingLost(server, ops, ops.length, join(dir, 'f2.jsonl'));
    });
  }

  for (const { signal, protocol } of alternateProtocols(signals.map((signal) => ({ signal })))) {
    it(`visit over ${protocol}: ${signal} at a random point, then the same command again: every document once`, async () => {
      const documents = 5000;
      // Some 2.5 s of visit (125 pages of 10 in a row per slice, 20 ms each) and a stop in its first 60 %: the rest
      // outlasts a signal's way to the process on a loaded machine (at 8 ms and 80 %, a fast visit had sometimes
      // written everything before SIGINT arrived).
      const server = await startDocumentServer({
        port: 0,
        faults: { latencyMs: 20, errorRate: 0.03, errorStatuses: [503] },
      });
      cleanups.push(() => server.close());
      server.store.seed(Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::s${i}`, fields: { n: i } })));
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const out = join(dir, 'out.jsonl');
      const lineBytes = JSON.stringify({ put: 'id:ns:music::s1000', fields: { n: 1000 } }).length + 1;
      const stopAtBytes = Math.floor(documents * (0.1 + 0.5 * Math.random())) * lineBytes;
      const why = `${signal} once ${stopAtBytes} bytes were written`;
      const args = [
        'visit',
        'ns/music',
        '-t',
        server.url,
        ...protocolFlag(protocol),
        '--slices',
        '4',
        '--no-stream',
        '--wanted-document-count',
        '10',
        '--checkpoint',
        'cp.json',
        '-o',
        'out.jsonl',
        '--quiet',
      ];

      const first = await runCli(args, {
        cwd: dir,
        stopWith: signal,
        stopWhen: () => existsSync(out) && statSync(out).size >= stopAtBytes,
      });
      expect(first.signalled, why).toBe(true);
      expect(first.stderr, why).toMatch(/stopping/);
      expect(first.code, why).toBe(signal === 'SIGINT' ? 130 : 143);
      const partial = readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l !== '').length;
      expect(partial, why).toBeLessThan(documents);

      const second = await runCli(args, { cwd: dir });
      expect(second.code, `${why}: ${second.stderr}`).toBe(0);
      const ids = readFileSync(out, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => {
          const d = JSON.parse(l) as { put?: string; id?: string };
          return d.put ?? d.id;
        });
      // The union of both runs' output: every document, none twice.
      expect(new Set(ids).size, why).toBe(documents);
      expect(ids.length, why).toBe(documents);
      const summary = JSON.parse(second.stdout);
      expect(summary['checkpoint.resumed']).toBe(true);
      expectSpoke(summary, protocol);
    });
  }
});
