import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Feeder } from '../../src/feed/feeder.js';
import { transformItem } from '../../src/feed/transform-items.js';
import type { RawItem } from '../../src/core/operation-splitter.js';
import { failureLines, failureReasons, storeMap, writeJsonl, type Op } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

/** A module doing each kind of thing a transform may do, chosen by the document id. */
const transformModule = `
export default function (op) {
  const id = op.put ?? op.update ?? op.remove;
  if (id.endsWith('::drop')) return null;
  if (id.endsWith('::throw')) throw new Error('cannot take ' + id);
  if (id.endsWith('::bad')) return 'not an operation';
  if (id.endsWith('::invalid')) return { put: id };
  if (id.endsWith('::split')) return [{ put: id + '-a', fields: { part: 1 } }, { put: id + '-b', fields: { part: 2 } }];
  if (op.fields !== undefined && 'name' in op.fields) {
    op.fields.title = op.fields.name;
    delete op.fields.name;
  }
  if (op.fields?.embedding !== undefined) op.fields.embedding = { values: op.fields.embedding };
  return op;
}
`;

const ops: Op[] = [
  { put: 'id:ns:music::a', fields: { name: 'A', embedding: [1, 2] } },
  { put: 'id:ns:music::drop', fields: { name: 'gone' } },
  { put: 'id:ns:music::throw', fields: {} },
  { put: 'id:ns:music::bad', fields: {} },
  { put: 'id:ns:music::invalid', fields: {} },
  { put: 'id:ns:music::split', fields: {} },
  { update: 'id:ns:music::a', fields: { year: { assign: 2000 } } },
  { remove: 'id:ns:music::old' },
];

describe('feed --transform', () => {
  const { server, dir } = useFeedFixtures();

  function setup(d: string): { input: string; module: string; failures: string } {
    const module = join(d, 't.mjs');
    writeFileSync(module, transformModule);
    return { input: writeJsonl(join(d, 'in.jsonl'), ops), module, failures: join(d, 'failures.jsonl') };
  }

  for (const workers of [1, 2]) {
    it(`renames, reshapes, splits, drops; errors go to the failure output with the input and the reason (workers ${workers})`, async () => {
      const s = await server();
      s.store.put('id:ns:music::old', { x: 1 });
      const { input, module, failures } = setup(dir());
      // With 2 workers shuffled too: the update on 'a' still lands after its put.
      const outcome = await new Feeder({
        endpoint: s.url,
        workers,
        transform: module,
        failures,
        shuffle: workers === 2,
        shuffleBuffer: 4,
      }).run(input);
      expect(storeMap(s)).toEqual(
        new Map<string, unknown>([
          ['id:ns:music::a', { title: 'A', embedding: { values: [1, 2] }, year: 2000 }],
          ['id:ns:music::split-a', { part: 1 }],
          ['id:ns:music::split-b', { part: 2 }],
        ]),
      );
      const sum = outcome.summary;
      // a, its update, the remove and two from split succeeded; throw, bad and invalid failed; drop is dropped.
      expect([sum.ok, sum.errors, sum.dropped, sum.operations]).toEqual([5, 3, 1, 8]);
      const lines = failureLines(failures).map((l) => JSON.parse(l) as Op);
      expect(lines.map((l) => l.put).sort()).toEqual([
        'id:ns:music::bad',
        'id:ns:music::invalid',
        'id:ns:music::throw',
      ]);
      const reasons = failureReasons(failures);
      const byLine = new Map(reasons.map((r) => [r.inputLine, r]));
      expect(byLine.get(3)).toMatchObject({
        code: 'VB_TRANSFORM',
        message: 'transform: cannot take id:ns:music::throw',
        input: input,
      });
      expect(byLine.get(4)).toMatchObject({
        code: 'VB_TRANSFORM',
        message: 'transform: returned a string, not an operation object',
      });
      expect(byLine.get(5)).toMatchObject({ code: 'VB_TRANSFORM' });
      expect(String(byLine.get(5)?.message)).toMatch(/^transform: returned an invalid operation: a put needs 'fields'/);
    });
  }

  it('a request failure of a transformed operation writes the input operation, so feeding it again with the transform retries it', async () => {
    const s = await server({ errorRate: 1, errorStatuses: [400] });
    const d = dir();
    const module = join(d, 't.mjs');
    writeFileSync(module, 'export default async (op) => ({ ...op, fields: { title: op.fields.name } });');
    const input = writeJsonl(join(d, 'in.jsonl'), [{ put: 'id:ns:music::x', fields: { name: 'X' } }]);
    const failures = join(d, 'f.jsonl');
    const outcome = await new Feeder({ endpoint: s.url, transform: module, failures, maxRetries: 0 }).run(input);
    expect(outcome.summary.errors).toBe(1);
    expect(failureLines(failures).map((l) => JSON.parse(l) as Op)).toEqual([
      { put: 'id:ns:music::x', fields: { name: 'X' } },
    ]);
  });

  it('a module that cannot be loaded is a usage error before anything is fed', async () => {
    const s = await server();
    const input = writeJsonl(join(dir(), 'in.jsonl'), ops);
    const missing = join(dir(), 'missing.mjs');
    // The message names the file looked for, not the module of ours that imports it.
    await expect(new Feeder({ endpoint: s.url, transform: missing }).run(input)).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: `cannot load transform '${missing}': no such file ${missing}`,
    });
    expect(storeMap(s).size).toBe(0);
  });

  it('a function is refused with workers: they import a module', () => {
    expect(() => new Feeder({ workers: 2, transform: (op) => op })).toThrow(/transform/);
  });
});

describe('transformItem', () => {
  const item = (text: string): RawItem => ({ bytes: Buffer.from(text), line: 7, offset: 100 });

  it('keeps the input line and offset on every output and the input bytes as their source', () => {
    const input = item('{"put":"id:a:b::1","fields":{}}');
    const out = transformItem((op) => [op, { remove: 'id:a:b::2' }], input) as RawItem[];
    expect(out.map((o) => [o.bytes.toString(), o.line, o.offset, o.source])).toEqual([
      ['{"put":"id:a:b::1","fields":{}}', 7, 100, input.bytes],
      ['{"remove":"id:a:b::2"}', 7, 100, input.bytes],
    ]);
  });

  it('marks the item dropped for null and undefined, passes unreadable JSON on untouched', () => {
    expect((transformItem(() => null, item('{"put":"id:a:b::1","fields":{}}')) as RawItem[])[0].dropped).toBe(true);
    expect((transformItem(() => undefined, item('{"put":"id:a:b::1","fields":{}}')) as RawItem[])[0].dropped).toBe(
      true,
    );
    const broken = item('{"put": oops');
    expect(transformItem(() => ({}), broken)).toEqual([broken]);
  });

  it('hands integers beyond 2^53 to the transform as bigint and writes them back exactly', () => {
    let seen: unknown;
    const out = transformItem((op) => {
      seen = op.fields?.big;
      return { ...op, fields: { ...op.fields, next: (op.fields?.big as bigint) + 1n } };
    }, item('{"put":"id:a:b::1","fields":{"big":9007199254740993,"small":1.5}}')) as RawItem[];
    expect(seen).toBe(9007199254740993n);
    expect(out[0].bytes.toString()).toBe(
      '{"put":"id:a:b::1","fields":{"big":9007199254740993,"small":1.5,"next":9007199254740994}}',
    );
  });
});
