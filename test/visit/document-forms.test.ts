import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { runCli, tempDir } from '../faults/harness.js';

/** The `vespa document` forms, "condition"/"create" inside the JSON of put and update, and the whole-cluster visit. */
describe('single-document commands as vespa document takes them', () => {
  let s: DocumentServer;
  let dir: string;
  let cleanup: () => void;
  const cli = (args: string[]) => runCli([...args, '-t', s.url], { cwd: dir, env: { VESPA_CLI_HOME: dir } });
  const file = (name: string, value: unknown): string => {
    writeFileSync(join(dir, name), JSON.stringify(value));
    return name;
  };

  beforeAll(async () => {
    s = await startDocumentServer({ port: 0 });
    ({ dir, cleanup } = tempDir('vb-docforms-'));
  });
  afterAll(async () => {
    await s.close();
    cleanup();
  });

  it('put file takes the id from the file; an id before the file wins; update/remove by file; get of several ids', async () => {
    expect(
      (await cli(['put', file('a.json', { put: 'id:ns:music::a', fields: { title: 'A', year: 1999 } })])).code,
    ).toBe(0);
    expect(s.store.get('id:ns:music::a')?.fields).toEqual({ title: 'A', year: 1999 });
    expect((await cli(['put', 'id:ns:music::b', 'a.json'])).code).toBe(0);
    expect(s.store.get('id:ns:music::b')?.fields).toEqual({ title: 'A', year: 1999 });
    expect(
      (await cli(['update', file('u.json', { update: 'id:ns:music::a', fields: { year: { assign: 2000 } } })])).code,
    ).toBe(0);
    expect(s.store.get('id:ns:music::a')?.fields).toMatchObject({ year: 2000 });
    const got = await cli(['get', 'id:ns:music::a', 'id:ns:music::b']);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toMatch(/"id": "id:ns:music::a"[\s\S]*"id": "id:ns:music::b"/);
    expect((await cli(['remove', file('r.json', { remove: 'id:ns:music::b' })])).code).toBe(0);
    expect(s.store.get('id:ns:music::b')).toBeUndefined();
    const mismatch = await cli(['remove', 'a.json']);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/the command is remove, but the JSON given is a put/);
    const noId = await cli(['put', file('f.json', { fields: { title: 'x' } })]);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toMatch(/no document id/);
  });

  it('get --ignore-missing: a 404 is not an error; without it, it is', async () => {
    const missing = await cli(['get', 'id:ns:music::nope', 'id:ns:music::a']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    const ignored = await cli(['get', 'id:ns:music::nope', 'id:ns:music::a', '--ignore-missing']);
    expect(ignored.code, ignored.stderr).toBe(0);
    expect(JSON.parse(ignored.stdout)).toMatchObject({ id: 'id:ns:music::a' });
  });

  it('put honours "condition" in the JSON (a false one writes nothing), and --condition wins over it', async () => {
    s.store.clear();
    await cli(['put', file('c0.json', { put: 'id:ns:music::c', fields: { title: 'old', year: 1990 } })]);
    const refused = await cli([
      'put',
      file('c1.json', { put: 'id:ns:music::c', fields: { title: 'new', year: 1990 }, condition: 'music.year == 2020' }),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/412/);
    expect(s.store.get('id:ns:music::c')?.fields).toMatchObject({ title: 'old' });
    const overridden = await cli(['put', 'c1.json', '--condition', 'music.year == 1990']);
    expect(overridden.code, overridden.stderr).toBe(0);
    expect(s.store.get('id:ns:music::c')?.fields).toMatchObject({ title: 'new' });
  });

  it('update honours "create": true in the JSON (the document is created), and --no-create wins over it', async () => {
    const update = file('cr.json', {
      update: 'id:ns:music::created',
      fields: { title: { assign: 'made' } },
      create: true,
    });
    const notCreated = await cli(['update', update, '--no-create']);
    expect(notCreated.code, notCreated.stderr).toBe(0);
    expect(s.store.get('id:ns:music::created')).toBeUndefined();
    const created = await cli(['update', update]);
    expect(created.code, created.stderr).toBe(0);
    expect(s.store.get('id:ns:music::created')?.fields).toEqual({ title: 'made' });
  });
});

describe('a whole-cluster visit finds its content cluster', () => {
  let one: DocumentServer;
  let two: DocumentServer;
  let dir: string;
  let cleanup: () => void;
  beforeAll(async () => {
    one = await startDocumentServer({ port: 0, clusters: ['music'] });
    two = await startDocumentServer({ port: 0, clusters: ['content', 'archive'] });
    ({ dir, cleanup } = tempDir('vb-discover-'));
    await fetch(`${one.url}/document/v1/ns/music/docid/x`, { method: 'POST', body: '{"fields":{"title":"x"}}' });
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    cleanup();
  });

  it('takes the only cluster the service names; with several, visits each (as vespa visit does)', async () => {
    const r = await runCli(['visit', '-t', one.url], { cwd: dir, env: { VESPA_CLI_HOME: dir } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("content cluster 'music'");
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ put: 'id:ns:music::x' });
    const several = await runCli(['visit', '-t', two.url], { cwd: dir, env: { VESPA_CLI_HOME: dir } });
    expect(several.code, several.stderr).toBe(0);
    expect(several.stderr).toContain("content clusters 'content', 'archive': visiting each");
    const named = await runCli(['visit', '-t', two.url, '--cluster', 'archive', '--quiet'], {
      cwd: dir,
      env: { VESPA_CLI_HOME: dir },
    });
    expect(named.code, named.stderr).toBe(0);
  });
});
