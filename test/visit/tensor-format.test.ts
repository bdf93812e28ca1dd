import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { DocumentClient } from '../../src/http/document-client.js';
import { visit } from '../../src/visit/visit.js';
import { VespaBulkError } from '../../src/core/errors.js';
import { tensorModel } from '../simulator/tensor-fixtures.js';
import { documentTypesOf } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { checkVisitOptionValues } from '../../src/visit/query.js';
import { runCommand } from '../support/run-command.js';
import { tempDir, type TempDir } from '../support/temp-dir.js';

/**
 * `--tensor-format` / `tensorFormat` on visit and get, sent as `format.tensors`; and the round trip the issue asks
 * for: tensors of every cell type and kind exported as hex-value feed lines feed into a fresh cluster unchanged.
 */

const everyKind = `schema all {
  document all {
    field d type tensor(x[3]) { indexing: attribute }
    field f type tensor<float>(x[2],y[2]) { indexing: attribute }
    field b type tensor<bfloat16>(x[4]) { indexing: attribute }
    field i type tensor<int8>(x[4]) { indexing: attribute }
    field s type tensor(key{}) { indexing: attribute }
    field s2 type tensor<float>(a{},b{}) { indexing: attribute }
    field m type tensor<bfloat16>(cat{},x[2]) { indexing: attribute }
    field m2 type tensor<int8>(a{},b{},x[2]) { indexing: attribute }
  }
}`;

function documentOf(n: number, addressedBlocks: boolean): string {
  const fields: Record<string, unknown> = {
    d: [n + 0.1, -n, 1e-7 * n],
    f: {
      values: [
        [n / 3, 1],
        [2, -0.5],
      ],
    },
    b: [n / 7, 1.5, -3.25, 1e5],
    i: [n, -n, 127, -128],
    s: { cells: { [`k${n}`]: n / 9, other: 2 } },
    s2: { cells: [{ address: { a: 'x', b: `y${n}` }, value: n + 0.25 }] },
    m: { blocks: { p: [n / 11, 1], q: [2, 3] } },
  };
  if (addressedBlocks) fields.m2 = { blocks: [{ address: { a: 'u', b: `v${n}` }, values: [n % 100, -7] }] };
  return JSON.stringify({ put: `id:ns:all::doc${n}`, fields });
}

const model = {
  types: documentTypesOf([parseSchema(everyKind, 'all.sd')]),
  ignoreUndefinedFields: false,
  documentApi: true,
};

let tmp: TempDir;
beforeAll(() => {
  tmp = tempDir('vb-tensor-');
});
afterAll(() => tmp.cleanup());

/** Feeds the corpus into one simulator, exports it with `--make-feed` in `format`, feeds that into another, and compares every document. */
async function roundTrip(format: 'hex' | 'hex-value', addressedBlocks: boolean): Promise<Record<string, unknown>> {
  const source = await startDocumentServer({ port: 0 });
  const target = await startDocumentServer({ port: 0 });
  source.setDocumentModel(model);
  target.setDocumentModel(model);
  const a = new DocumentClient({ endpoint: source.url });
  const b = new DocumentClient({ endpoint: target.url });
  try {
    const input = join(tmp.dir, `in-${format}.jsonl`);
    writeFileSync(input, Array.from({ length: 20 }, (_, n) => documentOf(n, addressedBlocks)).join('\n'));
    const fed = await runCommand(['feed', input, '-t', source.url, '--quiet']);
    expect(fed.code, fed.stderr).toBe(0);
    expect(source.store.size()).toBe(20);

    const exported = join(tmp.dir, `out-${format}.jsonl`);
    const visited = await runCommand([
      'visit',
      'ns/all',
      '-t',
      source.url,
      '--tensor-format',
      format,
      '--make-feed',
      '-o',
      exported,
      '--quiet',
    ]);
    expect(visited.code, visited.stderr).toBe(0);
    const again = await runCommand(['feed', exported, '-t', target.url, '--quiet']);
    expect(again.code, again.stderr).toBe(0);
    for (let n = 0; n < 20; n++) {
      const id = `id:ns:all::doc${n}`;
      for (const tensorFormat of ['short', 'hex'] as const) {
        const [x, y] = await Promise.all([a.get(id, { tensorFormat }), b.get(id, { tensorFormat })]);
        expect(y.status).toBe(200);
        expect(y.raw.toString(), `${id} ${tensorFormat}`).toBe(x.raw.toString());
      }
    }
    return (JSON.parse(readFileSync(exported, 'utf8').split('\n')[0]) as { fields: Record<string, unknown> }).fields;
  } finally {
    await a.close();
    await b.close();
    await source.close();
    await target.close();
  }
}

describe('visit --tensor-format hex --make-feed feeds back into a fresh cluster as the same documents', () => {
  it('hex-value: every cell type, dense, sparse and mixed with one mapped dimension', async () => {
    const first = await roundTrip('hex-value', false);
    // Dense cells are one string each; sparse tensors stay cells, mixed ones blocks of hex.
    expect(typeof first.d).toBe('string');
    expect(first.i).toMatch(/^[0-9A-F]{8}$/);
    expect(first.m).toMatchObject({ p: expect.stringMatching(/^[0-9A-F]{8}$/) as unknown });
  });

  it('hex: also mixed tensors with several mapped dimensions (their blocks keep the "blocks" key)', async () => {
    const first = await roundTrip('hex', true);
    expect(first.m2).toMatchObject({
      type: 'tensor<int8>(a{},b{},x[2])',
      blocks: [{ address: { a: 'u' }, values: expect.stringMatching(/^[0-9A-F]{4}$/) as unknown }],
    });
  });
});

describe('tensorFormat and --tensor-format', () => {
  let s: DocumentServer;
  beforeAll(async () => {
    s = await startDocumentServer({ port: 0 });
    s.setDocumentModel(tensorModel);
    s.store.put('id:ns:vec::a', { d: [1.5, -2], i: [1, -1, 127] });
  });
  afterAll(() => s.close());

  it('get --tensor-format sends format.tensors', async () => {
    const r = await runCommand(['get', 'id:ns:vec::a', '-t', s.url, '--tensor-format', 'hex']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      pathId: '/document/v1/ns/vec/docid/a',
      id: 'id:ns:vec::a',
      fields: {
        d: { type: 'tensor(x[2])', values: '3FF8000000000000C000000000000000' },
        i: { type: 'tensor<int8>(x[3])', values: '01FF7F' },
      },
    });
  });

  it('visit sends it on every request, streamed or not', async () => {
    for (const stream of [true, false]) {
      const docs: unknown[] = [];
      for await (const d of visit({
        endpoint: s.url,
        namespace: 'ns',
        documentType: 'vec',
        slices: 1,
        stream,
        tensorFormat: 'long-value',
      }))
        docs.push(d);
      expect(
        docs.map((d) => (d as { fields: unknown }).fields),
        String(stream),
      ).toEqual([
        {
          d: [
            { address: { x: '0' }, value: 1.5 },
            { address: { x: '1' }, value: -2 },
          ],
          i: [
            { address: { x: '0' }, value: 1 },
            { address: { x: '1' }, value: -1 },
            { address: { x: '2' }, value: 127 },
          ],
        },
      ]);
    }
  });

  it('refuses an unknown format in the library (VB_USAGE) and on the command line (exit 2)', async () => {
    const client = new DocumentClient({ endpoint: s.url });
    try {
      const err = await client.get('id:ns:vec::a', { tensorFormat: 'binary' as never }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VespaBulkError);
      expect(err).toMatchObject({
        code: 'VB_USAGE',
        message:
          "tensorFormat must be one of 'short', 'long', 'short-value', 'long-value', 'hex', 'hex-value', not 'binary'",
      });
    } finally {
      await client.close();
    }
    expect(() => checkVisitOptionValues({ endpoint: s.url, tensorFormat: 'HEX' as never })).toThrow(
      "tensorFormat must be one of 'short', 'long', 'short-value', 'long-value', 'hex', 'hex-value', not 'HEX'",
    );
    const cli = await runCommand(['visit', 'ns/vec', '-t', s.url, '--tensor-format', 'binary']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toContain('Invalid values:');
    expect(cli.stderr).toContain(
      'Argument: tensor-format, Given: "binary", Choices: "short", "long", "short-value", "long-value", "hex", "hex-value"',
    );
  });
});
