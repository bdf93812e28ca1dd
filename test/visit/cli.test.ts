import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { runCommand } from '../support/run-command.js';

describe('vespa-bulk visit and document commands', () => {
  let s: DocumentServer;
  let dir: string;
  beforeAll(async () => {
    s = await startDocumentServer({ port: 0, visitChunkDocuments: 30 });
    s.store.seed(
      Array.from({ length: 120 }, (_, i) => ({
        id: `id:ns:music::${i}`,
        fields: { title: `t${i}`, year: 2000 + (i % 10) },
      })),
    );
    dir = mkdtempSync(join(tmpdir(), 'vb-cli-'));
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports to stdout with the summary on stderr, and to a directory with the summary on stdout', async () => {
    const out = await runCommand([
      'visit',
      'ns/music',
      '-t',
      s.url,
      '--slices',
      '3',
      '--selection',
      'music.year == 2003',
      '--quiet',
    ]);
    expect(out.code).toBe(0);
    const lines = out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { put: string });
    expect(lines.map((l) => l.put).sort()).toEqual(
      Array.from({ length: 12 }, (_, k) => `id:ns:music::${3 + 10 * k}`).sort(),
    );
    expect(JSON.parse(out.stderr.slice(out.stderr.indexOf('{')))['visit.document.count']).toBe(12);

    const d = await runCommand([
      'visit',
      'ns/music',
      '-t',
      s.url,
      '--slices',
      '2',
      '--output-dir',
      join(dir, 'slices'),
      '--make-feed',
      '--quiet',
    ]);
    expect(d.code).toBe(0);
    expect(JSON.parse(d.stdout)['visit.document.count']).toBe(120);
    const per = [0, 1].map(
      (i) =>
        readFileSync(join(dir, 'slices', `slice-000${i}.jsonl`), 'utf8')
          .trim()
          .split('\n').length,
    );
    expect(per[0] + per[1]).toBe(120);
  });

  it('takes repeated --header and --slice-id flags without swallowing the positional after them; --verbose lists the slices', async () => {
    const out = await runCommand([
      'visit',
      '--header',
      'X-A: 1',
      '--header',
      'X-B: 2',
      '--slices',
      '4',
      '--slice-id',
      '1',
      '--slice-id',
      '3',
      'ns/music',
      '-t',
      s.url,
      '--quiet',
      '--verbose',
    ]);
    expect(out.code).toBe(0);
    const ids = out.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { put: string }).put);
    const summary = JSON.parse(out.stderr.slice(out.stderr.indexOf('{'))) as { slices: { slice: number }[] };
    expect(summary.slices.map((x) => x.slice).sort()).toEqual([1, 3]);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(120);
    expect(ids.every((id) => id.startsWith('id:ns:music::'))).toBe(true);
  });

  it('refuses update-where without a selection before sending anything, and bad flags as usage errors', async () => {
    const before = s.store.get('id:ns:music::1')!.fields;
    const r = await runCommand(['update-where', 'ns/music', '-t', s.url, '--assign', 'title="x"']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/update-where needs --selection/);
    expect(s.store.get('id:ns:music::1')!.fields).toEqual(before);
    const bad = await runCommand(['visit', 'ns/music', '-t', s.url, '--from', 'last tuesday']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--from 'last tuesday'/);
  });

  it('update-where with --assign changes the selected documents, --dry-run only counts; --to-endpoint migrates', async () => {
    const dry = await runCommand([
      'update-where',
      'ns/music',
      '--selection',
      'music.year == 2009',
      '--assign',
      'title="nine"',
      '--dry-run',
      '-t',
      s.url,
      '--quiet',
    ]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      'bulk.kind': 'update-where',
      'bulk.ok': true,
      'bulk.dry.run': true,
      'bulk.document.count': 12,
    });
    expect(s.store.get('id:ns:music::9')!.fields.title).toBe('t9');
    const upd = await runCommand([
      'update-where',
      'ns/music',
      '--selection',
      'music.year == 2009',
      '--assign',
      'title="nine"',
      '-t',
      s.url,
      '--quiet',
    ]);
    expect(upd.code).toBe(0);
    expect(JSON.parse(upd.stdout)).toMatchObject({ 'bulk.ok': true, 'bulk.document.count': 12 });
    expect(
      s.store
        .all()
        .filter((d) => d.fields.title === 'nine')
        .map((d) => d.fields.year),
    ).toEqual(Array(12).fill(2009));

    const other = await startDocumentServer({ port: 0 });
    try {
      const m = await runCommand([
        'visit',
        'ns/music',
        '-t',
        s.url,
        '--slices',
        '2',
        '--to-endpoint',
        other.url,
        '--quiet',
      ]);
      expect(m.code).toBe(0);
      expect(JSON.parse(m.stdout)).toMatchObject({ 'migrate.ok': true, feed: { 'feeder.ok.count': 120 } });
      expect(
        other.store
          .all()
          .map((d) => d.id)
          .sort(),
      ).toEqual(
        s.store
          .all()
          .map((d) => d.id)
          .sort(),
      );
    } finally {
      await other.close();
    }
  });

  it('migrates into an endpoint that needs its own token, without sending it the source token', async () => {
    const guarded = await startDocumentServer({ port: 0, token: 'destination-secret' });
    try {
      const failures = join(dir, 'refused.jsonl');
      const refused = await runCommand([
        'visit',
        'ns/music',
        '-t',
        s.url,
        '--to-endpoint',
        guarded.url,
        '--failures',
        failures,
        '--quiet',
      ]);
      expect(refused.code).toBe(1);
      expect(guarded.store.size()).toBe(0);
      // The first refusal stops the migration: the rest would be refused alike.
      expect(refused.stderr).toMatch(/migration stopped: the destination refused the credentials: check --to-token/);
      expect(refused.stderr).toContain(`written to ${failures}`);
      expect(JSON.parse(refused.stdout)).toMatchObject({
        'migrate.ok': false,
        'migrate.stopped': 'unauthorized',
        'migrate.failures.file': failures,
      });
      const reasons = readFileSync(`${failures}.reasons.jsonl`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(reasons.length).toBeGreaterThanOrEqual(1);
      for (const r of reasons) expect(r).toMatchObject({ status: 401, attempts: 1 });
      const m = await runCommand([
        'visit',
        'ns/music',
        '-t',
        s.url,
        '--to-endpoint',
        guarded.url,
        '--to-token',
        'destination-secret',
        '--quiet',
      ]);
      expect(m.code).toBe(0);
      expect(JSON.parse(m.stdout)).toMatchObject({ 'migrate.ok': true, feed: { 'feeder.ok.count': s.store.size() } });
      expect(
        guarded.store
          .all()
          .map((d) => d.id)
          .sort(),
      ).toEqual(
        s.store
          .all()
          .map((d) => d.id)
          .sort(),
      );
      expect(m.stderr).not.toContain('destination-secret');
    } finally {
      await guarded.close();
    }
  });

  it('get, put, update and remove one document; 404 and 412 are clear failures', async () => {
    const put = await runCommand(['put', 'id:ns:music::new', '{"fields":{"title":"hello","year":1999}}', '-t', s.url]);
    expect(put.code).toBe(0);
    expect(JSON.parse(put.stdout).id).toBe('id:ns:music::new');
    const upd = await runCommand(['update', 'id:ns:music::new', '--assign', 'title="bye"', '-t', s.url]);
    expect(upd.code).toBe(0);
    const got = await runCommand(['get', 'id:ns:music::new', '-t', s.url]);
    expect(JSON.parse(got.stdout).fields).toEqual({ title: 'bye', year: 1999 });
    const failed = await runCommand(
      ['update', 'id:ns:music::new', '-', '--condition', 'music.year == 1', '-t', s.url],
      '{"title":{"assign":"z"}}',
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/condition did not hold.*412/);
    expect(s.store.get('id:ns:music::new')!.fields.title).toBe('bye');
    const rm = await runCommand(['remove', 'id:ns:music::new', '-t', s.url]);
    expect(rm.code).toBe(0);
    const missing = await runCommand(['get', 'id:ns:music::new', '-t', s.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found \(404\)/);
    expect(missing.stdout).toBe('');
    // A malformed id is bad usage, refused before anything is sent.
    const bad = await runCommand(['get', 'song-1', '-t', s.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid document id 'song-1'/);
  });
});
