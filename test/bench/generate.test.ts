import { describe, expect, it } from 'vitest';
import { modelFromPackage } from '../../src/deploy/load-model.js';
import { judgeDocumentOperation } from '../../src/schema/judge.js';
import { documentTypesOf } from '../../src/schema/document-model.js';
import { parseSchema } from '../../src/schema/sd-schema.js';
import { OperationGenerator, parseMix, schemaDocuments, templateDocuments } from '../../src/bench/operations.js';
import { vary } from '../../src/bench/template-values.js';
import { highestHeldRate, isHeld, parseRamp, parseRates } from '../../src/bench/load-profile.js';
import { Random } from '../../src/bench/random.js';
import type { DocumentModel } from '../../src/schema/document-model.js';

const sampleApp = new URL('../../samples/app', import.meta.url).pathname;

function judgeAll(model: DocumentModel, lines: string[]): string[] {
  const refusals: string[] = [];
  for (const line of lines) {
    const op = JSON.parse(line) as { put?: string; update?: string; remove?: string; fields?: unknown };
    if (op.remove !== undefined) continue;
    const id = (op.put ?? op.update)!;
    const type = id.split(':')[2];
    const verdict = judgeDocumentOperation(
      model,
      op.put !== undefined ? 'put' : 'update',
      id,
      type,
      JSON.stringify({ fields: op.fields }),
    );
    if (!verdict.ok) refusals.push(`${line}: ${verdict.message}`);
  }
  return refusals;
}

describe('generated documents', () => {
  it('every document generated for samples/app, puts and updates, is accepted by the schema judge', async () => {
    const model = await modelFromPackage(sampleApp);
    const random = new Random(42);
    const gen = new OperationGenerator(
      schemaDocuments(model, random, { namespace: 'bench', runTag: 'r' }),
      random,
      parseMix('put=70,update=20,remove=10'),
    );
    const lines = Array.from({ length: 3000 }, () => gen.next());
    const kinds = new Set(lines.map((l) => Object.keys(JSON.parse(l) as object)[0]));
    expect(kinds).toEqual(new Set(['put', 'update', 'remove']));
    expect(new Set(lines.map((l) => /id:bench:(\w+)::/.exec(l)![1]))).toEqual(new Set(['music', 'user', 'product']));
    expect(judgeAll(model, lines)).toEqual([]);
  });

  it('covers every field type: struct, position, tensors (dense, mapped, mixed, general), maps, weighted sets, references', () => {
    const sd = `schema doc {
      document doc {
        struct person { field name type string {} field born type long {} }
        field a type array<int> {} field ws type weightedset<long> {} field m type map<string, person> {}
        field mi type map<int, array<string>> {} field s type person {} field loc type position {}
        field d type tensor<float>(x[4]) {} field mp type tensor(cat{}) {} field mx type tensor<int8>(cat{}, x[3]) {}
        field gen type tensor(a{}, b{}, x[2]) {} field unb type tensor(x[]) {} field b type bool {} field by type byte {}
        field f16 type float16 {} field r type raw {} field u type uri {} field ref type reference<doc> {}
        field text type string {} field dbl type double {}
      }
    }`;
    const model: DocumentModel = {
      types: documentTypesOf([parseSchema(sd, 'doc.sd')]),
      ignoreUndefinedFields: false,
      documentApi: true,
    };
    const random = new Random(7);
    const gen = new OperationGenerator(
      schemaDocuments(model, random, { namespace: 'ns', runTag: 'r' }),
      random,
      parseMix('put=50,update=50'),
    );
    const lines = Array.from({ length: 500 }, () => gen.next());
    expect(judgeAll(model, lines)).toEqual([]);
    const put = JSON.parse(lines[0]) as { fields: Record<string, unknown> };
    expect(Object.keys(put.fields).sort()).toEqual(
      [
        'a',
        'b',
        'by',
        'd',
        'dbl',
        'f16',
        'gen',
        'loc',
        'm',
        'mi',
        'mp',
        'mx',
        'r',
        'ref',
        's',
        'text',
        'u',
        'unb',
        'ws',
      ].sort(),
    );
    expect((put.fields.d as { values: number[] }).values).toHaveLength(4);
    // Realistic sizes: a text field is a paragraph, a plain string a few words.
    expect((put.fields.text as string).length).toBeGreaterThan(100);
  });

  it('a template is varied per document, keeping lengths and magnitudes, and stays acceptable', async () => {
    const model = await modelFromPackage(sampleApp);
    const template = {
      put: 'id:mynamespace:music::x',
      fields: { title: 'Hello World 42', year: 1999, popularity: 7.25, genres: ['rock', 'pop'], ratings: { fan: 4 } },
    };
    const random = new Random(3);
    const gen = new OperationGenerator(templateDocuments(template, random, 'r'), random, parseMix('put=80,update=20'));
    const lines = Array.from({ length: 500 }, () => gen.next());
    expect(judgeAll(model, lines)).toEqual([]);
    const puts = lines
      .map((l) => JSON.parse(l) as { put?: string; fields: typeof template.fields })
      .filter((o) => o.put !== undefined);
    expect(new Set(puts.map((p) => p.fields.title)).size).toBeGreaterThan(puts.length * 0.9);
    for (const p of puts) {
      expect(p.put).toMatch(/^id:mynamespace:music::r-\d+$/);
      expect(p.fields.title).toMatch(/^[A-Z][a-z]{4} [A-Z][a-z]{4} \d\d$/);
      expect(p.fields.year).toBeGreaterThanOrEqual(1000);
      expect(p.fields.year).toBeLessThanOrEqual(1999);
      expect(p.fields.genres).toHaveLength(2);
      expect(Object.keys(p.fields.ratings)).toEqual(['fan']);
    }
    expect(vary(-0.5, new Random(1))).toBeLessThan(0);
    expect(() => templateDocuments({ fields: {} }, random, 'r')).toThrow(/must be a put operation/);
  });

  it('updates and removes go only to ids put before, and never to a removed one', () => {
    const random = new Random(5);
    const gen = new OperationGenerator(
      templateDocuments({ put: 'id:n:t::a', fields: { f: 'x' } }, random, 'r'),
      random,
      parseMix('put=40,update=30,remove=30'),
    );
    const live = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const op = JSON.parse(gen.next()) as { put?: string; update?: string; remove?: string };
      if (op.put !== undefined) live.add(op.put);
      else if (op.update !== undefined) expect(live.has(op.update)).toBe(true);
      else {
        expect(live.has(op.remove!)).toBe(true);
        live.delete(op.remove!);
      }
    }
  });
});

describe('load profiles', () => {
  it('parses rates, ramps and mixes, refusing bad ones with VB_USAGE', () => {
    expect(parseRates('1000, 2000,4000')).toEqual([1000, 2000, 4000]);
    expect(parseRamp('1000:4000:1000')).toEqual([1000, 2000, 3000, 4000]);
    expect(parseMix('put=80,update=15,remove=5')).toEqual({ put: 80, update: 15, remove: 5 });
    for (const bad of [
      () => parseRates('100,x'),
      () => parseRates('0'),
      () => parseRamp('5:1:1'),
      () => parseRamp('1:2'),
      () => parseMix('update=1'),
      () => parseMix('put=1,drop=2'),
    ]) {
      expect(bad).toThrow(expect.objectContaining({ code: 'VB_USAGE' }) as Error);
    }
  });

  it('held means achieved >= 95% of asked, p99 <= SLO and 429 share <= max; the highest held rate is reported', () => {
    const criteria = { sloMs: 50, max429Share: 0.01 };
    const ok = { targetRate: 1000, achievedRate: 960, p99Ms: 40, throttledShare: 0.005 };
    expect(isHeld(ok, criteria)).toBe(true);
    expect(isHeld({ ...ok, achievedRate: 940 }, criteria)).toBe(false);
    expect(isHeld({ ...ok, p99Ms: 51 }, criteria)).toBe(false);
    expect(isHeld({ ...ok, throttledShare: 0.02 }, criteria)).toBe(false);
    expect(
      highestHeldRate([
        { targetRate: 1000, held: true },
        { targetRate: 2000, held: true },
        { targetRate: 4000, held: false },
      ]),
    ).toBe(2000);
    expect(highestHeldRate([{ targetRate: 1000, held: false }])).toBeUndefined();
  });
});
