import { describe, expect, it } from 'vitest';
import { ExactlyOnce } from '../../src/visit/exactly-once.js';
import { classifyLinePrefix, LineSplitter, readStringValue } from '../../src/visit/jsonl-lines.js';
import { parseTimeBound, parseTimeRange } from '../../src/visit/time-range.js';
import {
  baseVisitQuery,
  parseDocumentSpec,
  validateVisitOptions,
  visitFingerprint,
  visitRequestPath,
} from '../../src/visit/query.js';
import { linesOf, toFeedOperation } from '../../src/sinks/json-write.js';
import { createEncoder } from '../../src/sinks/output-format.js';
import type { VisitEntry } from '../../src/document/visit-entry.js';
import { isVespaBulkError } from '../../src/core/errors.js';

function lines(chunks: string[]): string[] {
  const out: string[] = [];
  const s = new LineSplitter();
  for (const c of chunks) s.push(Buffer.from(c), (b, st, e) => out.push(b.toString('utf8', st, e)));
  const rest = s.takeRest();
  if (rest) out.push(rest.toString());
  return out;
}

describe('LineSplitter', () => {
  it('reassembles lines across any chunk boundary, dropping CR and blank lines', () => {
    const text = '{"put":"id:a:b::1","fields":{}}\r\n\n{"remove":"id:a:b::2"}\n{"continuation":{"token":"x"}}';
    const expected = ['{"put":"id:a:b::1","fields":{}}', '{"remove":"id:a:b::2"}', '{"continuation":{"token":"x"}}'];
    for (let cut = 0; cut <= text.length; cut++) {
      for (const size of [1, 3, 7]) {
        const chunks: string[] = [text.slice(0, cut)];
        for (let i = cut; i < text.length; i += size) chunks.push(text.slice(i, i + size));
        expect(lines(chunks)).toEqual(expected);
      }
    }
  });

  it('reports the bytes of an unfinished line', () => {
    const s = new LineSplitter();
    s.push(Buffer.from('{"put":"id:a:b::1"}\n{"put'), () => {});
    expect(s.pendingBytes).toBe(5);
  });
});

describe('line classification', () => {
  const kind = (t: string) => classifyLinePrefix(Buffer.from(t), 0, t.length);
  it('tells the kinds apart by prefix alone', () => {
    expect(kind('{"put":"id:a:b::1","fields":{}}')).toBe('put');
    expect(kind('{"remove":"id:a:b::1"}')).toBe('remove');
    expect(kind('{"continuation":{"token":"t","percentFinished":3}}')).toBe('continuation');
    expect(kind('{"sessionStats":{"documentCount":3}}')).toBe('sessionStats');
    expect(kind('{"sessionTrace":{"trace":[]}}')).toBe('sessionTrace');
    expect(kind('{"message":{"text":"x","severity":"info"}}')).toBe('message');
    expect(kind('{ "put": "id:a:b::1"}')).toBe('other');
    expect(kind('{"pu')).toBe('other');
  });
  it('reads ids with and without escapes', () => {
    const plain = Buffer.from('{"put":"id:a:b::x/y:z","fields":{}}');
    expect(readStringValue(plain, 8, plain.length)).toBe('id:a:b::x/y:z');
    const escaped = Buffer.from('{"put":"id:a:b::q\\"u\\\\o\\u00e9","fields":{}}');
    expect(readStringValue(escaped, 8, escaped.length)).toBe('id:a:b::q"u\\oé');
    const unterminated = Buffer.from('{"put":"id:a:b::x');
    expect(readStringValue(unterminated, 8, unterminated.length)).toBeUndefined();
  });
});

describe('ExactlyOnce', () => {
  it('delivers documents sent again after a cut only once, across repeated cuts', () => {
    const e = new ExactlyOnce();
    expect(e.accept('a')).toBe(true);
    e.tokenAdvanced();
    expect(e.accept('b')).toBe(true);
    expect(e.accept('c')).toBe(true);
    e.cut();
    expect(e.pendingIds().sort()).toEqual(['b', 'c']);
    // resumed: the service sends b again, then d, then is cut once more before any token
    expect(e.accept('b')).toBe(false);
    expect(e.accept('d')).toBe(true);
    e.cut();
    expect(e.accept('c')).toBe(false);
    expect(e.accept('b')).toBe(false);
    expect(e.accept('d')).toBe(false);
    expect(e.accept('e')).toBe(true);
    e.tokenAdvanced();
    expect(e.accept('f')).toBe(true);
    expect(e.repeatsSkipped).toBe(4);
    expect(e.pendingIds()).toEqual(['f']);
  });
  it('starts from the ids a checkpoint recorded', () => {
    const e = new ExactlyOnce(['x']);
    expect(e.accept('x')).toBe(false);
    expect(e.accept('y')).toBe(true);
  });
});

describe('time range', () => {
  it('accepts epoch seconds, ms, µs and ISO dates, in microseconds', () => {
    expect(parseTimeBound('1700000000')).toBe(1_700_000_000_000_000n);
    expect(parseTimeBound('1700000000.25')).toBe(1_700_000_000_250_000n);
    expect(parseTimeBound('1700000000123ms')).toBe(1_700_000_000_123_000n);
    expect(parseTimeBound('5us')).toBe(5n);
    expect(parseTimeBound('2024-01-31')).toBe(BigInt(Date.UTC(2024, 0, 31)) * 1000n);
    expect(parseTimeBound('2024-01-31T12:30:00Z')).toBe(BigInt(Date.UTC(2024, 0, 31, 12, 30)) * 1000n);
    expect(parseTimeBound('2024-01-31T12:30:00.000001+02:00')).toBe(BigInt(Date.UTC(2024, 0, 31, 10, 30)) * 1000n + 1n);
  });
  it('refuses nonsense and an empty range', () => {
    expect(() => parseTimeBound('yesterday')).toThrow(/--from 'yesterday'/);
    const err = (() => {
      try {
        parseTimeRange('2024-02-01', '2024-01-01');
      } catch (e) {
        return e;
      }
    })();
    expect(isVespaBulkError(err, 'VB_USAGE')).toBe(true);
  });
});

describe('visit query', () => {
  it('maps options to parameters, slices and continuation per request', () => {
    const q = baseVisitQuery({
      endpoint: 'http://x',
      selection: 'music.year > 2000',
      cluster: 'c',
      bucketSpace: 'global',
      fieldSet: 'music:title',
      fromTimestamp: 10n,
      toTimestamp: '20',
      includeRemoves: true,
      concurrency: 4,
      serviceTimeout: '30s',
      tracelevel: 3,
    });
    const path = visitRequestPath('/document/v1/ns/music/docid/', q, 4, 2, 'tok+/=');
    const url = new URL(`http://h${path}`);
    expect(url.pathname).toBe('/document/v1/ns/music/docid/');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      selection: 'music.year > 2000',
      cluster: 'c',
      bucketSpace: 'global',
      fieldSet: 'music:title',
      fromTimestamp: '10',
      toTimestamp: '20',
      includeRemoves: 'true',
      concurrency: '4',
      timeout: '30s',
      tracelevel: '3',
      stream: 'true',
      slices: '4',
      sliceId: '2',
      continuation: 'tok+/=',
    });
  });
  it('pages non-streamed visits by 1000 unless told', () => {
    expect(baseVisitQuery({ endpoint: 'http://x', stream: false }).get('wantedDocumentCount')).toBe('1000');
    expect(baseVisitQuery({ endpoint: 'http://x' }).has('wantedDocumentCount')).toBe(false);
    expect(visitRequestPath('/document/v1/', new URLSearchParams(), 1, 0, undefined)).toBe('/document/v1/');
  });
  it('validates slices, ids, timeouts and the document spec', () => {
    expect(() => validateVisitOptions({ endpoint: 'http://x', slices: 2, sliceIds: [2] })).toThrow(
      /sliceIds must be integers from 0 to 1, not 2/,
    );
    expect(() => validateVisitOptions({ endpoint: 'http://x', serviceTimeout: '5' })).toThrow(
      /serviceTimeout must be a number with unit s or ms/,
    );
    expect(() => parseDocumentSpec('music')).toThrow(/namespace/);
    expect(parseDocumentSpec('ns/music')).toEqual({ namespace: 'ns', documentType: 'music' });
  });
  it('fingerprints what is visited, not how', () => {
    const a = visitFingerprint({
      endpoint: 'http://x',
      namespace: 'n',
      documentType: 't',
      selection: 's',
      slices: 4,
      concurrency: 2,
    });
    expect(
      visitFingerprint({
        endpoint: 'http://y',
        namespace: 'n',
        documentType: 't',
        selection: 's',
        slices: 4,
        serviceTimeout: '9s',
      }),
    ).toBe(a);
    expect(
      visitFingerprint({ endpoint: 'http://x', namespace: 'n', documentType: 't', selection: 'other', slices: 4 }),
    ).not.toBe(a);
    expect(
      visitFingerprint({ endpoint: 'http://x', namespace: 'n', documentType: 't', selection: 's', slices: 2 }),
    ).not.toBe(a);
  });
});

function entriesOf(text: string): VisitEntry[] {
  const buf = Buffer.from(text);
  const out: VisitEntry[] = [];
  new LineSplitter().push(buf, (b, s, e) => {
    const t = b.toString('utf8', s, e);
    const o = JSON.parse(t) as Record<string, string>;
    out.push({
      kind: o.remove ? 'remove' : 'put',
      id: o.put ?? o.remove ?? o.id,
      shape: o.id ? 'document' : 'feed',
      buf: b,
      start: s,
      end: e,
    });
  });
  return out;
}

describe('formats', () => {
  const text = '{"put":"id:a:b::1","fields":{"n":1}}\n{"remove":"id:a:b::2"}\n{"id":"id:a:b::3","fields":{"n":3}}\n';
  it('passes JSONL bytes through as one slice of the chunk', () => {
    const es = entriesOf(text).slice(0, 2);
    const out = linesOf(es, 'feed');
    expect(out).toHaveLength(1);
    expect(out[0].buffer).toBe(es[0].buf.buffer);
    expect(Buffer.concat(out).toString()).toBe('{"put":"id:a:b::1","fields":{"n":1}}\n{"remove":"id:a:b::2"}\n');
  });
  it('turns plain JSON documents into feed operations for feed and json', () => {
    const es = entriesOf(text);
    expect(toFeedOperation(es[2]).toString()).toBe('{"put":"id:a:b::3","fields":{"n":3}}');
    expect(Buffer.concat(linesOf(es, 'jsonl')).toString()).toBe(text);
    const feed = Buffer.concat(linesOf(es, 'feed'))
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(feed).toEqual([
      { put: 'id:a:b::1', fields: { n: 1 } },
      { remove: 'id:a:b::2' },
      { put: 'id:a:b::3', fields: { n: 3 } },
    ]);
    const json = createEncoder('json');
    const body = Buffer.concat([...json.encode(es.slice(0, 1)), ...json.encode(es.slice(1)), json.end()!]).toString();
    expect(JSON.parse(body)).toEqual(feed);
    const none = createEncoder('json');
    expect(JSON.parse(none.end()!.toString())).toEqual([]);
  });
});
