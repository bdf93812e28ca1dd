import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { DocumentClient } from '../../src/http/document-client.js';
import { type WireProtocol } from '../../src/http/transport.js';
import { createTransport, defaultH2Connections } from '../../src/http/create-transport.js';
import { OptionError } from '../../src/core/options-check.js';
import { bulkOperation, validateBulkOptions } from '../../src/visit/bulk.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { migrate } from '../../src/migrate/migrate.js';
import { validateVisitOptions } from '../../src/visit/query.js';
import { visit } from '../../src/visit/visit.js';
import { runCommand } from '../support/run-command.js';
import { tempDir } from '../support/temp-dir.js';
import { startWireTap, type WireTap } from '../support/wire-tap.js';

/**
 * Visit, the bulk operations and the single-document operations over HTTP/2 and HTTP/1.1 against the simulator,
 * through a relay that reads which protocol each connection really spoke.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function simulator(documents = 0): Promise<DocumentServer> {
  const s = await startDocumentServer({ port: 0, visitChunkDocuments: 20 });
  cleanups.push(() => s.close());
  s.store.seed(
    Array.from({ length: documents }, (_, i) => ({ id: `id:ns:music::${i}`, fields: { title: `song ${i}`, n: i } })),
  );
  return s;
}

async function tap(server: DocumentServer): Promise<WireTap> {
  const t = await startWireTap(server.url);
  cleanups.push(() => t.close());
  return t;
}

/** A server that speaks HTTP/1.1 only, as a proxy or load balancer may: it answers the HTTP/2 preface with 400. */
async function http1Only(): Promise<{ url: string; requests: number }> {
  const state = { url: '', requests: 0 };
  const server = createServer((_req, res) => {
    state.requests++;
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

const protocols: WireProtocol[] = ['h2', 'http1.1'];

describe.each(protocols)('over %s', (protocol) => {
  it('visit delivers every document on connections of that protocol, and reports it', async () => {
    const s = await simulator(120);
    const t = await tap(s);
    const told: WireProtocol[] = [];
    const v = visit({
      endpoint: t.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 4,
      protocol,
      onProtocol: (p) => told.push(p),
    });
    const ids = new Set<string>();
    for await (const d of v) ids.add(d.id);
    const report = await v.report;
    expect(ids.size).toBe(120);
    expect(report.protocol).toBe(protocol);
    expect(told).toEqual([protocol]);
    expect(t.connections.length).toBeGreaterThan(0);
    expect(new Set(t.connections)).toEqual(new Set([protocol]));
  });

  it('update-where works through the chunks on connections of that protocol, and reports it', async () => {
    const s = await simulator(50);
    const t = await tap(s);
    const summary = await bulkOperation({
      kind: 'update-where',
      endpoint: t.url,
      namespace: 'ns',
      documentType: 'music',
      selection: 'music.n < 30',
      fields: { title: { assign: 'x' } },
      protocol,
    });
    expect(summary).toMatchObject({ ok: true, documentCount: 30, protocol });
    expect(new Set(t.connections)).toEqual(new Set([protocol]));
    const client = new DocumentClient({ endpoint: s.url });
    cleanups.push(() => client.close());
    expect((await client.get('id:ns:music::29')).body.fields.title).toBe('x');
    expect((await client.get('id:ns:music::30')).body.fields.title).toBe('song 30');
  });

  it('put and get of one document go on a connection of that protocol', async () => {
    const s = await simulator();
    const t = await tap(s);
    const told: WireProtocol[] = [];
    const client = new DocumentClient({ endpoint: t.url, protocol, onProtocol: (p) => told.push(p) });
    cleanups.push(() => client.close());
    expect((await client.put('id:ns:music::one', { title: 'one' })).status).toBe(200);
    const got = await client.get('id:ns:music::one');
    expect(got.status).toBe(200);
    expect(got.body.fields).toEqual({ title: 'one' });
    expect(told).toEqual([protocol]);
    expect(t.connections).toEqual([protocol]);
  });
});

describe('the visit pool', () => {
  it('carries 64 and 256 slices at once over HTTP/2 on a few connections (at most 16 by default), where HTTP/1.1 opens one per slice in flight', async () => {
    const s = await simulator(640);
    for (const slices of [64, 256]) {
      const h2 = await tap(s);
      const overH2 = visit({ endpoint: h2.url, namespace: 'ns', documentType: 'music', slices });
      let n = 0;
      for await (const _ of overH2) n++;
      expect(n).toBe(640);
      expect((await overH2.report).protocol).toBe('h2');
      expect(new Set(h2.connections)).toEqual(new Set(['h2']));
      expect(h2.connections.length).toBeLessThanOrEqual(defaultH2Connections);
    }

    const h1 = await tap(s);
    const overH1 = visit({ endpoint: h1.url, namespace: 'ns', documentType: 'music', slices: 64, protocol: 'http1.1' });
    let n = 0;
    for await (const _ of overH1) n++;
    expect(n).toBe(640);
    expect(new Set(h1.connections)).toEqual(new Set(['http1.1']));
    expect(h1.connections.length).toBeGreaterThan(4);
  });

  it('reports the protocol once from visit workers, and a migration feeds the destination in the protocol of the visit', async () => {
    const source = await simulator(60);
    const from = await tap(source);
    const destination = await simulator();
    const to = await tap(destination);
    const dir = tempDir('vb-protocol-');
    cleanups.push(dir.cleanup);
    const told: WireProtocol[] = [];
    const summary = await exportDocuments({
      endpoint: from.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 4,
      workers: 2,
      protocol: 'http1.1',
      onProtocol: (p) => told.push(p),
      output: join(dir.dir, 'out.jsonl'),
    });
    expect(summary).toMatchObject({ ok: true, documents: 60, protocol: 'http1.1' });
    expect(told).toEqual(['http1.1']);
    expect(
      readFileSync(join(dir.dir, 'out.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ).toHaveLength(60);

    const moved = await migrate({
      endpoint: from.url,
      namespace: 'ns',
      documentType: 'music',
      slices: 2,
      protocol: 'http1.1',
      destination: to.url,
      feed: { failures: false },
    });
    expect(moved.ok).toBe(true);
    expect(moved.feed.protocol).toBe('http1.1');
    expect(destination.store.size()).toBe(60);
    expect(new Set([...from.connections, ...to.connections])).toEqual(new Set(['http1.1']));
  });
});

describe('large documents over HTTP/2', () => {
  /** A JSON object of about `bytes` bytes, as text: ASCII digits and letters, and a few characters of two and three bytes. */
  function fieldsOf(bytes: number): string {
    const unit = 'é€0123456789abcdefghijklmnopqrstuvwxyz';
    return `{"title":"${bytes} bytes","body":"${unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)))}"}`;
  }

  it('a visit brings documents of 1, 4 and 20 MB back byte for byte; a 20 MB document puts and gets', async () => {
    const s = await simulator();
    const t = await tap(s);
    const client = new DocumentClient({ endpoint: t.url, protocol: 'h2' });
    cleanups.push(() => client.close());
    const sent = new Map<string, string>();
    for (const mb of [1, 4, 20]) {
      const id = `id:ns:music::big-${mb}`;
      sent.set(id, fieldsOf(mb << 20));
      expect((await client.put(id, sent.get(id)!)).status).toBe(200);
    }
    const got = await client.get('id:ns:music::big-20');
    expect(got.status).toBe(200);
    expect(
      got.raw.equals(
        Buffer.from(
          `{"pathId":"/document/v1/ns/music/docid/big-20","id":"id:ns:music::big-20","fields":${sent.get('id:ns:music::big-20')}}`,
        ),
      ),
    ).toBe(true);

    const v = visit({ endpoint: t.url, namespace: 'ns', documentType: 'music', slices: 2, protocol: 'h2' });
    const seen = new Map<string, Buffer>();
    for await (const d of v) seen.set(d.id, Buffer.from(d.raw));
    expect((await v.report).protocol).toBe('h2');
    expect([...seen.keys()].sort()).toEqual([...sent.keys()].sort());
    for (const [id, fields] of sent)
      expect(seen.get(id)!.equals(Buffer.from(`{"put":"${id}","fields":${fields}}`)), id).toBe(true);
    expect(new Set(t.connections)).toEqual(new Set(['h2']));
  });
});

describe('protocol options', () => {
  it('a bad value, or one beside a dispatcher (whose protocol is its own), is refused, naming the option', () => {
    const visitOptions = { endpoint: 'http://127.0.0.1:1', namespace: 'ns', documentType: 'music' };
    const bulkOptions = { ...visitOptions, kind: 'delete-where' as const, selection: 'true' };
    const bad = { protocol: 'h3' as unknown as WireProtocol };
    const withTransport = { protocol: 'h2' as const, transport: createTransport({ origin: 'http://127.0.0.1:1' }) };
    for (const check of [
      (o: object) => validateVisitOptions({ ...visitOptions, ...o }),
      (o: object) => validateBulkOptions({ ...bulkOptions, ...o }),
      (o: object) => new DocumentClient({ endpoint: visitOptions.endpoint, ...o }),
    ]) {
      expect(() => check(bad)).toThrow(OptionError);
      expect(() => check(bad)).toThrow(/protocol must be one of 'auto', 'h2', 'http1.1', not 'h3'/);
      expect(() => check(withTransport)).toThrow(/give transport or protocol, not both/);
    }
    void withTransport.transport.close();
  });
});

describe('the CLI', () => {
  it('says once which HTTP a visit speaks (cluster discovery included) and records it in the summary; nothing with --quiet', async () => {
    const s = await simulator(10);
    const auto = await runCommand(['visit', '-t', s.url, '--slices', '2']);
    expect(auto.code, auto.stderr).toBe(0);
    expect(
      auto.stderr.match(/vespa-bulk: speaking HTTP\/2 to http:\/\/127\.0\.0\.1:\d+ \(--protocol auto\)/g),
    ).toHaveLength(1);
    expect(auto.stderr).toMatch(/content cluster 'content'/);
    expect(auto.stdout.trim().split('\n')).toHaveLength(10);
    expect(auto.stderr).toMatch(/"http\.protocol": "h2"/);

    const quiet = await runCommand(['visit', 'ns/music', '-t', s.url, '--protocol', 'http1.1', '-q']);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toMatch(/speaking/);
    expect(quiet.stderr).toMatch(/"http\.protocol": "http1\.1"/);

    const bulk = await runCommand(['delete-where', 'ns/music', '-s', 'music.n < 3', '-t', s.url, '--http2']);
    expect(bulk.code, bulk.stderr).toBe(0);
    expect(bulk.stderr).toMatch(/vespa-bulk: speaking HTTP\/2 to http:\/\/127\.0\.0\.1:\d+\n/);
    expect(JSON.parse(bulk.stdout)).toMatchObject({
      'bulk.ok': true,
      'bulk.document.count': 3,
      'http.protocol': 'h2',
    });
  });

  it('--protocol h2 against a server without HTTP/2 is bad usage (exit 2), naming what it answered, for visit, delete-where and get', async () => {
    const h1 = await http1Only();
    const refusal =
      /does not speak HTTP\/2 \(.*answered the HTTP\/2 preface with 'HTTP\/1\.1 400 Bad Request'\); use --protocol auto or --protocol http1\.1/;
    for (const args of [
      ['visit', 'ns/music', '-t', h1.url, '--protocol', 'h2'],
      ['delete-where', 'ns/music', '-s', 'true', '-t', h1.url, '--http2'],
      ['get', 'id:ns:music::1', '-t', h1.url, '--protocol', 'h2'],
    ]) {
      const r = await runCommand(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(refusal);
    }
    expect(h1.requests).toBe(0);
  });
});
