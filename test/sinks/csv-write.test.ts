import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CsvEncoder, quoted } from '../../src/sinks/csv-write.js';
import { csvHeaderOf } from '../../src/visit/export/tabular-export.js';
import type { VisitEntry } from '../../src/document/visit-entry.js';
import { tempDir } from '../support/temp-dir.js';

const entry = (id: string, fields: string): VisitEntry => {
  const buf = Buffer.from(`{"put":"${id}","fields":${fields}}`);
  return { kind: 'put', id, shape: 'feed', buf, start: 0, end: buf.length };
};

describe('csv encoding', () => {
  it('quotes what RFC 4180 needs quoted, and nothing else', () => {
    expect(['plain', 'a,b', 'say "hi"', 'two\nlines', ' lead', 'cr\r', ''].map(quoted)).toEqual([
      'plain',
      '"a,b"',
      '"say ""hi"""',
      '"two\nlines"',
      '" lead"',
      '"cr\r"',
      '',
    ]);
  });

  it('infers the header from the first rows, then refuses a field that has no column', () => {
    const e = new CsvEncoder({ rowGroupRows: 2 });
    expect(e.encode([entry('id:a:t::1', '{"x":1}')])).toEqual([]);
    const out = e.encode([entry('id:a:t::2', '{"y":{"n":12345678901234567890},"x":null}')]);
    expect(Buffer.concat(out).toString()).toBe('id,x,y\nid:a:t::1,1,\nid:a:t::2,,"{""n"":12345678901234567890}"\n');
    expect(() => e.encode([entry('id:a:t::3', '{"z":1}')])).toThrow(
      expect.objectContaining({ code: 'VB_COLUMN_TYPE', place: { documentId: 'id:a:t::3' } }),
    );
  });

  it("a field called id moves the document id to 'documentid'", () => {
    const e = new CsvEncoder({});
    e.encode([entry('id:a:t::1', '{"id":7}')]);
    expect(e.end()!.toString()).toBe('documentid,id\nid:a:t::1,7\n');
  });

  it('a continued file keeps its header: no second header, its column order', () => {
    const e = new CsvEncoder({}, ['id', 'y', 'x']);
    expect(Buffer.concat(e.encode([entry('id:a:t::1', '{"x":1,"y":true}')])).toString()).toBe('id:a:t::1,true,1\n');
    expect(e.end()).toBeUndefined();
  });

  it('reads the header of a plain and of a gzipped file being continued', () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(join(dir, 'a.csv'), 'id,x,y\nid:a:t::1,1,2\n');
      writeFileSync(join(dir, 'b.csv.gz'), gzipSync('id,z\n1,2\n'));
      writeFileSync(join(dir, 'c.csv'), '');
      expect([
        csvHeaderOf(join(dir, 'a.csv')),
        csvHeaderOf(join(dir, 'b.csv.gz')),
        csvHeaderOf(join(dir, 'c.csv')),
        csvHeaderOf(join(dir, 'none.csv')),
      ]).toEqual([['id', 'x', 'y'], ['id', 'z'], undefined, undefined]);
    } finally {
      cleanup();
    }
  });
});
