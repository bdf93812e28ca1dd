import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { exportDocuments } from '../../src/visit/export/index.js';
import { migrate } from '../../src/migrate/migrate.js';
import { visit } from '../../src/visit/visit.js';
import { topLevelValue } from '../../src/core/json-scan.js';
import { tempDir as makeTempDir } from '../support/temp-dir.js';

/** `long` fields beyond 2^53 through every path that does not pass the service's bytes through untouched. */
const big = '9007199254740993';
const negative = '-9223372036854775807';

function lines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

describe('the plain JSON response keeps numbers exact', () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  async function seeded(): Promise<DocumentServer> {
    const s = await startDocumentServer({ port: 0, visitChunkDocuments: 7 });
    cleanups.push(() => s.close());
    // Seeded through the HTTP interface, as text, so the store holds the exact values.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${s.url}/document/v1/ns/music/docid/${i}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"fields":{"title":"t${i}","big":${big},"neg":${negative},"nested":{"w":[1.5,${big},true,null,"a,b}"]}}}`,
      });
      expect(res.status).toBe(200);
    }
    return s;
  }
  function tempDir(): string {
    const { dir, cleanup } = makeTempDir('vb-plain-');
    cleanups.push(cleanup);
    return dir;
  }

  it('pages (--no-stream) and a streamed plain object write the received values, as jsonl and as feed', async () => {
    const s = await seeded();
    const dir = tempDir();
    const variants = [
      { name: 'pages', stream: false, wantedDocumentCount: 6 },
      // A server that streams the plain object: asked for by accepting only application/json.
      { name: 'streamed', stream: true, headers: { accept: 'application/json' } },
    ];
    for (const v of variants) {
      for (const format of ['jsonl', 'feed'] as const) {
        const out = join(dir, `${v.name}-${format}.jsonl`);
        const summary = await exportDocuments({
          endpoint: s.url,
          namespace: 'ns',
          documentType: 'music',
          slices: 2,
          format,
          output: out,
          ...v,
        });
        expect(summary.ok).toBe(true);
        const got = lines(out);
        expect(got, `${v.name} ${format}`).toHaveLength(20);
        for (const line of got) {
          expect(line).toContain(`"big":${big}`);
          expect(line).toContain(`"neg":${negative}`);
          expect(line).toContain(`"w":[1.5,${big},true,null,"a,b}"]`);
          expect(line.startsWith(format === 'feed' ? '{"put":"id:ns:music::' : '{"id":"id:ns:music::')).toBe(true);
        }
      }
    }
  });

  it('a --no-stream migration copies long values exactly', async () => {
    const s = await seeded();
    const other = await startDocumentServer({ port: 0 });
    cleanups.push(() => other.close());
    const summary = await migrate({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      stream: false,
      wantedDocumentCount: 5,
      destination: other.url,
      feed: { failures: false },
    });
    expect(summary.ok).toBe(true);
    const res = await fetch(`${other.url}/document/v1/ns/music/docid/3`);
    const text = await res.text();
    expect(text).toContain(`"big":${big}`);
    expect(text).toContain(`"neg":${negative}`);
  });

  it('gives library users each document with its id and fields', async () => {
    const s = await seeded();
    const seen: string[] = [];
    for await (const d of visit({
      endpoint: s.url,
      namespace: 'ns',
      documentType: 'music',
      stream: false,
      wantedDocumentCount: 4,
    })) {
      seen.push(d.id);
      expect(d.fields.title).toBe(`t${d.id.slice('id:ns:music::'.length)}`);
    }
    expect(seen.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `id:ns:music::${i}`).sort());
  });
});

describe('topLevelValue', () => {
  const span = (text: string, key: string) => {
    const buf = Buffer.from(text);
    const r = topLevelValue(buf, 0, buf.length, key);
    return r === undefined ? undefined : buf.toString('utf8', r.start, r.end);
  };
  it('finds a member after strings, escapes and nested containers that look like it', () => {
    expect(span('{"id":"id:a:b::x\\"fields\\":1","fields":{"f":"}","g":[{"fields":2}]}}', 'fields')).toBe(
      '{"f":"}","g":[{"fields":2}]}',
    );
    expect(span('{ "a" : [1,{"b":"]"}] , "fields" : 12345678901234567890 }', 'fields')).toBe('12345678901234567890');
    expect(span('{"a":true,"fields":null}', 'fields')).toBe('null');
    expect(span('{"id":"x"}', 'fields')).toBeUndefined();
    expect(span('{"f\\u0069elds":{"x":1}}', 'fields')).toBe('{"x":1}');
  });
});
