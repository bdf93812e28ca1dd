import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { fieldsTextOf } from '../../src/document/single-operation.js';
import { runCommand } from '../support/run-command.js';

/** What put, update and update-where send is what was given: `long` values beyond 2^53 keep their digits. */
const big = '9007199254740993';

describe('fieldsTextOf', () => {
  it('takes the fields of a feed-shaped object or the object itself, as text, and appends --assign', () => {
    expect(fieldsTextOf(`{"put":"id:a:b::1","fields":{"n":${big}}}`, undefined).text).toBe(`{"n":${big}}`);
    expect(fieldsTextOf(` {"n":${big}} `, undefined).text).toBe(`{"n":${big}}`);
    const merged = fieldsTextOf(`{"fields":{"n":{"assign":${big}}}}`, ['m=-9223372036854775807', 'title=plain words']);
    expect(merged.text).toBe(
      `{"n":{"assign":${big}},"m":{"assign":-9223372036854775807},"title":{"assign":"plain words"}}`,
    );
    expect(Object.keys(merged.fields)).toEqual(['n', 'm', 'title']);
    expect(fieldsTextOf(undefined, ['a=1']).text).toBe('{"a":{"assign":1}}');
    expect(fieldsTextOf('{}', ['a=[1, 2]']).text).toBe('{"a":{"assign":[1, 2]}}');
    expect(() => fieldsTextOf('{"a":{"assign":1}}', ['a=2'])).toThrow(/--assign a: the field is also in the document/);
  });
});

/** Records request bodies and answers as the service does; the simulator's own update path is not under test. */
async function recordingPeer() {
  const bodies: Array<{ method: string; url: string; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({ method: req.method!, url: req.url!, body: Buffer.concat(chunks).toString() });
      res.setHeader('content-type', 'application/json');
      const path = new URL(req.url!, 'http://x').pathname;
      res.end(
        path.endsWith('/docid/')
          ? JSON.stringify({ pathId: path, documentCount: 1 })
          : JSON.stringify({ pathId: path, id: 'id:ns:music::long' }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe('single-document and update-where commands keep long values exact', () => {
  let s: DocumentServer;
  let peer: Awaited<ReturnType<typeof recordingPeer>>;
  beforeAll(async () => {
    s = await startDocumentServer({ port: 0 });
    peer = await recordingPeer();
  });
  afterAll(async () => {
    await s.close();
    await peer.close();
  });

  it('put from stdin is stored with the digits given', async () => {
    const put = await runCommand(
      ['put', 'id:ns:music::long', '-', '-t', s.url],
      `{"put":"id:ns:music::long","fields":{"title":"x","big":${big}}}`,
    );
    expect(put.code).toBe(0);
    expect(await (await fetch(`${s.url}/document/v1/ns/music/docid/long`)).text()).toContain(`"big":${big}`);
  });

  it('get prints the document with the digits the service sent, indented', async () => {
    s.store.clear();
    await fetch(`${s.url}/document/v1/ns/music/docid/long`, {
      method: 'POST',
      body: `{"fields":{"title":"x","big":${big}}}`,
    });
    const got = await runCommand(['get', 'id:ns:music::long', '-t', s.url]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain(`"big": ${big}`);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: 'id:ns:music::long', fields: { title: 'x' } });
  });

  it('update and update-where send --assign values and update files as given', async () => {
    const upd = await runCommand(['update', 'id:ns:music::long', '--assign', `other=${big}`, '-t', peer.url]);
    expect(upd.code).toBe(0);
    const where = await runCommand([
      'update-where',
      'ns/music',
      `{"fields":{"n":{"increment":${big}}}}`,
      '--selection',
      'true',
      '--cluster',
      'content',
      '--assign',
      'title="y"',
      '-t',
      peer.url,
      '--quiet',
    ]);
    expect(where.code).toBe(0);
    expect(JSON.parse(where.stdout)).toMatchObject({ 'bulk.ok': true, 'bulk.document.count': 1 });
    expect(peer.bodies.map((b) => [b.method, b.body])).toEqual([
      ['PUT', `{"fields":{"other":{"assign":${big}}}}`],
      ['PUT', `{"fields":{"n":{"increment":${big}},"title":{"assign":"y"}}}`],
    ]);
  });
});
