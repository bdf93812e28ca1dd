import type { FeedOperationObject } from '../../src/feed/source.js';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import {
  DocumentStore,
  startDocumentServer,
  type DocumentServer,
} from '../../src/simulator/document-api/document-server.js';
import { exportDocuments, type ExportOptions } from '../../src/visit/export/index.js';
import { recordedStart, recordValue, sinceFromTimestamp } from '../../src/visit/export/since.js';
import { runCommand } from '../support/run-command.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * Incremental exports (`since`): a full export, changes, then exports of what changed since, fed in order into an
 * empty copy, leave the copy equal to the original. The simulator's clock is the test's: writes are stamped hours
 * apart (seeded an hour back, changed now or later) instead of waiting, so what an increment leaves out is known.
 */
describe('visit --since: incremental exports', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const hour = 3_600_000;
  const id = (i: number | string): string => `id:ns:music::${i}`;

  /** A source whose writes are stamped at real time + `clock.offsetMs`, seeded an hour back; and a directory. */
  async function setup(count = 40) {
    const clock = { offsetMs: -hour };
    const source = await startDocumentServer({
      port: 0,
      store: new DocumentStore(['content'], { nowMs: () => Date.now() + clock.offsetMs }),
    });
    cleanups.push(() => source.close());
    source.store.seed(Array.from({ length: count }, (_, i) => ({ id: id(i), fields: { title: `t${i}`, n: i } })));
    clock.offsetMs = 0;
    const { dir, cleanup } = tempDir('vb-since-');
    cleanups.push(cleanup);
    const base: ExportOptions = { endpoint: source.url, namespace: 'ns', documentType: 'music', slices: 3 };
    return { source, clock, dir, base };
  }

  /** Writes through the document API, as a user's feed does. */
  async function change(server: DocumentServer, operations: FeedOperationObject[]): Promise<void> {
    const summary = await feed(operations, { endpoint: server.url, failures: false, checkpoint: false });
    expect(summary.errors).toBe(0);
  }

  /** The operations an export left in a directory of (gzipped) slice files, or in one file. */
  function operationsIn(path: string): { put?: string; remove?: string; fields?: Record<string, unknown> }[] {
    const files = path.endsWith('.jsonl')
      ? [path]
      : readdirSync(path)
          .sort()
          .map((f) => join(path, f));
    return files.flatMap((f) => {
      const text = (f.endsWith('.gz') ? gunzipSync(readFileSync(f)) : readFileSync(f)).toString('utf8');
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { put?: string; remove?: string });
    });
  }

  /** Feeds the full export, then each increment in order, into an empty simulator; resolves with its documents. */
  async function restore(exports: string[]): Promise<Map<string, Record<string, unknown>>> {
    const copy = await startDocumentServer({ port: 0 });
    cleanups.push(() => copy.close());
    for (const e of exports) {
      const files = e.endsWith('.jsonl')
        ? [e]
        : readdirSync(e)
            .sort()
            .map((f) => join(e, f));
      const summary = await feed(files, { endpoint: copy.url, failures: false, checkpoint: false });
      expect(summary.errors).toBe(0);
    }
    return documentsOf(copy);
  }

  function documentsOf(server: DocumentServer): Map<string, Record<string, unknown>> {
    return new Map(server.store.all().map((d) => [d.id, d.fields]));
  }

  it('exports the puts, updates and removes since the full export, which brings a copy to equality', async () => {
    const { source, dir, base } = await setup();
    const full = await exportDocuments({
      ...base,
      outputDir: join(dir, 'full'),
      gzip: true,
      checkpoint: join(dir, 'full.ckpt'),
    });
    expect(full.ok).toBe(true);
    expect(Date.parse(full.startedAt!)).toBeLessThanOrEqual(Date.now());
    const saved = JSON.parse(readFileSync(join(dir, 'full.ckpt'), 'utf8')) as { started?: string; completed?: string };
    expect(saved.started).toBe(full.startedAt);
    expect(saved.completed).toBeDefined();

    await change(source, [
      { put: id('new1'), fields: { title: 'new', n: 100 } },
      { update: id(1), fields: { title: { assign: 'changed' } } },
      { update: id(2), fields: { n: { increment: 5 } } },
      { remove: id(3) },
      { remove: id(4) },
      { put: id('brief'), fields: { title: 'gone again' } },
      { remove: id('brief') },
      { put: id(5), fields: { title: 'replaced' } },
    ]);

    const inc = await exportDocuments({
      ...base,
      since: join(dir, 'full.ckpt'),
      outputDir: join(dir, 'inc1'),
      gzip: true,
      checkpoint: join(dir, 'inc1.ckpt'),
    });
    expect(inc.ok).toBe(true);
    // The recorded start less the default minute.
    expect(BigInt(inc.fromTimestamp!)).toBe(BigInt(Date.parse(full.startedAt!) - 60_000) * 1000n);
    const ops = operationsIn(join(dir, 'inc1'));
    const puts = new Map(ops.filter((o) => o.put !== undefined).map((o) => [o.put!, o.fields]));
    const removes = ops
      .filter((o) => o.remove !== undefined)
      .map((o) => o.remove!)
      .sort();
    expect([...puts.keys()].sort()).toEqual([id(1), id(2), id(5), id('new1')].sort());
    // An update comes out as the whole document as it stands.
    expect(puts.get(id(1))).toEqual({ title: 'changed', n: 1 });
    expect(puts.get(id(2))).toEqual({ title: 't2', n: 7 });
    expect(removes).toEqual([id(3), id(4), id('brief')].sort());
    expect(inc.removes).toBe(3);

    expect(await restore([join(dir, 'full'), join(dir, 'inc1')])).toEqual(documentsOf(source));
  });

  it("chains increments through each one's saved summary, in every output form (one file, workers, json)", async () => {
    const { source, clock, dir, base } = await setup();
    const full = await exportDocuments({ ...base, output: join(dir, 'full.jsonl'), format: 'feed' });
    writeFileSync(join(dir, 'full.summary.json'), JSON.stringify(full));

    await change(source, [{ update: id(10), fields: { title: { assign: 'a' } } }, { remove: id(11) }]);
    const inc1 = await exportDocuments({
      ...base,
      since: join(dir, 'full.summary.json'),
      outputDir: join(dir, 'inc1'),
      workers: 2,
    });
    writeFileSync(join(dir, 'inc1.summary.json'), JSON.stringify(inc1));
    expect(
      operationsIn(join(dir, 'inc1'))
        .map((o) => o.put ?? o.remove)
        .sort(),
    ).toEqual([id(10), id(11)]);

    // Stamped an hour on: past the second increment's start, whatever its margin.
    clock.offsetMs = hour;
    await change(source, [
      { put: id(11), fields: { title: 'back' } },
      { remove: id(12) },
      { update: id(13), fields: { n: { assign: -1 } } },
    ]);
    // Paged plain JSON responses this time: their removes too come out as {"remove":id}.
    const inc2 = await exportDocuments({
      ...base,
      since: join(dir, 'inc1.summary.json'),
      output: join(dir, 'inc2.jsonl'),
      format: 'json',
      stream: false,
    });
    expect(inc2.ok).toBe(true);
    const ops2 = JSON.parse(readFileSync(join(dir, 'inc2.jsonl'), 'utf8')) as { put?: string; remove?: string }[];
    // The first increment's changes are within its margin of the second's start, so they may come again; the seeded rest not.
    const ids2 = ops2.map((o) => o.put ?? o.remove);
    expect(ids2).toEqual(expect.arrayContaining([id(11), id(12), id(13)]));
    expect(ids2.every((i) => [id(10), id(11), id(12), id(13)].includes(i!))).toBe(true);
    expect(ops2.find((o) => o.remove === id(12))).toEqual({ remove: id(12) });

    // The json array is one file; feed it like the others.
    writeFileSync(join(dir, 'inc2.json'), readFileSync(join(dir, 'inc2.jsonl')));
    const copy = await startDocumentServer({ port: 0 });
    cleanups.push(() => copy.close());
    for (const input of [
      join(dir, 'full.jsonl'),
      ...readdirSync(join(dir, 'inc1'))
        .sort()
        .map((f) => join(dir, 'inc1', f)),
      join(dir, 'inc2.json'),
    ]) {
      expect((await feed(input, { endpoint: copy.url, failures: false, checkpoint: false })).errors).toBe(0);
    }
    expect(documentsOf(copy)).toEqual(documentsOf(source));
  });

  it('starts from a time given, less the margin', async () => {
    const { source, clock, dir, base } = await setup();
    const t0 = Date.now();
    clock.offsetMs = hour;
    await change(source, [{ update: id(20), fields: { title: { assign: 'early' } } }]);
    clock.offsetMs = 3 * hour;
    await change(source, [{ update: id(21), fields: { title: { assign: 'late' } } }, { remove: id(22) }]);
    const since = new Date(t0 + 2 * hour).toISOString();
    const out = join(dir, 'inc.jsonl');
    const inc = await exportDocuments({ ...base, since, sinceMarginMs: 0, output: out });
    expect(
      operationsIn(out)
        .map((o) => o.put ?? o.remove)
        .sort(),
    ).toEqual([id(21), id(22)]);
    expect(inc.fromTimestamp).toBe(String(BigInt(Date.parse(since)) * 1000n));
    // Epoch seconds, with a margin of an hour and a half reaching back to the earlier change.
    const wider = await exportDocuments({
      ...base,
      since: String(Math.floor((t0 + 2 * hour) / 1000)),
      sinceMarginMs: 1.5 * hour,
      output: out,
    });
    expect(wider.documents + wider.removes).toBe(3);
  });

  it('refuses what cannot start an increment, naming it', async () => {
    const { dir, base } = await setup(4);
    const file = (name: string, value: unknown): string => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    const refused = (options: Partial<ExportOptions>, message: RegExp) =>
      expect(exportDocuments({ ...base, output: join(dir, 'x.jsonl'), ...options })).rejects.toMatchObject({
        code: 'VB_USAGE',
        message: expect.stringMatching(message) as unknown,
      });
    await refused({ since: join(dir, 'missing.json') }, /neither a time .* nor a readable/);
    await refused(
      { since: file('failed.json', { 'visit.ok': false, 'visit.started': new Date().toISOString() }) },
      /did not finish/,
    );
    await refused({ since: file('old.json', { 'visit.ok': true }) }, /records no start time/);
    await refused({ since: file('other.json', { hello: 1 }) }, /not an export's checkpoint/);
    await refused(
      {
        since: file('unfinished.ckpt', {
          format: 'vespa-bulk-visit-checkpoint/1',
          visit: 'x',
          slices: {},
          started: new Date().toISOString(),
        }),
      },
      /not completed/,
    );
    await refused({ since: '1700000000', fromTimestamp: 1n }, /give since or fromTimestamp, not both/);
    await refused({ since: '1700000000', includeRemoves: false }, /includeRemoves must be left out or true/);
    await refused({ sinceMarginMs: 5 }, /sinceMarginMs must be used with since/);
    await refused(
      { since: join(dir, 'same.ckpt'), checkpoint: join(dir, 'same.ckpt') },
      /checkpoint must be another file than since/,
    );
  });

  it("a resumed export keeps its first run's start", async () => {
    const { dir, base } = await setup(10);
    const options = { ...base, output: join(dir, 'full.jsonl'), checkpoint: join(dir, 'full.ckpt') };
    await exportDocuments(options);
    // As if the first run had begun long ago and been stopped: the rerun continues it.
    const saved = JSON.parse(readFileSync(options.checkpoint, 'utf8')) as Record<string, unknown>;
    writeFileSync(
      options.checkpoint,
      JSON.stringify({ ...saved, started: '2020-01-01T00:00:00.000Z', completed: undefined }),
    );
    const again = await exportDocuments(options);
    expect(again.resumed).toBe(true);
    expect(again.startedAt).toBe('2020-01-01T00:00:00.000Z');
    const after = JSON.parse(readFileSync(options.checkpoint, 'utf8')) as { started: string; completed?: string };
    expect(after.started).toBe('2020-01-01T00:00:00.000Z');
    expect(after.completed).toBeDefined();
  });

  it('reads a summary among other stderr lines, and takes the margin off its start', () => {
    const summary = JSON.stringify(
      { 'visit.ok': true, 'visit.started': '2024-01-31T12:00:00.000Z', slices: [{ slice: 0 }] },
      null,
      2,
    );
    const stderr = `vespa-bulk: content cluster 'content'\n${summary}\nvespa-bulk: report written to r.html\n`;
    const start = recordedStart(recordValue(stderr, 'err.txt'), 'err.txt');
    expect(start).toEqual({ micros: BigInt(Date.parse('2024-01-31T12:00:00Z')) * 1000n, source: 'summary' });
    expect(sinceFromTimestamp(start, 60_000)).toBe(start.micros - 60_000_000n);
    expect(sinceFromTimestamp({ micros: 5n, source: 'time' }, 1)).toBe(0n);
    expect(() => recordValue('vespa-bulk: no summary here\n', 'err.txt')).toThrow(
      expect.objectContaining({ code: 'VB_BAD_JSON' }),
    );
  });

  it('CLI: --since the saved summary of an --output-dir export; usage errors exit 2', async () => {
    const { source, dir } = await setup(20);
    const target = ['ns/music', '-t', source.url, '--slices', '2', '--quiet'];
    const full = await runCommand(['visit', ...target, '--output-dir', join(dir, 'full'), '--gzip']);
    expect(full.code).toBe(0);
    const summary = JSON.parse(full.stdout) as Record<string, unknown>;
    expect(typeof summary['visit.started']).toBe('string');
    writeFileSync(join(dir, 'full.json'), full.stdout);

    await change(source, [{ remove: id(0) }, { update: id(1), fields: { title: { assign: 'x' } } }]);
    const inc = await runCommand([
      'visit',
      ...target,
      '--since',
      join(dir, 'full.json'),
      '--output-dir',
      join(dir, 'inc'),
    ]);
    expect(inc.code).toBe(0);
    const incSummary = JSON.parse(inc.stdout) as Record<string, unknown>;
    expect(incSummary['visit.remove.count']).toBe(1);
    expect(incSummary['visit.document.count']).toBe(1);
    expect(incSummary['visit.from.timestamp']).toBe(
      String(BigInt(Date.parse(summary['visit.started'] as string) - 60_000) * 1000n),
    );
    expect(await restore([join(dir, 'full'), join(dir, 'inc')])).toEqual(documentsOf(source));

    const both = await runCommand(['visit', ...target, '--since', '1700000000', '--from', '1700000000']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give --since or --from\/--to, not both/);
  });
});
