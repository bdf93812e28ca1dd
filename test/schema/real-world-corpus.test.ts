import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { readPackageFiles } from '../../src/schema/app-package.js';
import { documentModelOf, type DocumentModel } from '../../src/schema/document-model.js';
import { judgeDocumentOperation } from '../../src/schema/judge.js';
import { predicateError } from '../../src/schema/predicate-parser.js';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deployPackage } from '../deploy/fixtures.js';
import { call } from '../simulator/call.js';

/**
 * Application packages modelled on the Vespa sample apps (test/schema/corpus/<name>/): every document of
 * feed.jsonl passes the judge, and each line of mutants.jsonl (one field of a feed document made wrong) is
 * refused with the service's message. Every field of every feed document has a mutant.
 */

const corpusDir = new URL('./corpus/', import.meta.url).pathname;
const packages = readdirSync(corpusDir).filter((n) => statSync(join(corpusDir, n)).isDirectory());

interface Line {
  kind: 'put' | 'update';
  id: string;
  fields: Record<string, unknown>;
  message?: string;
  status?: 400 | 500;
  where: string;
}

function packageFiles(dir: string): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (!name.endsWith('.jsonl')) files.set(relative(dir, path), readFileSync(path));
    }
  };
  walk(dir);
  return files;
}

function readLines(file: string): Line[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ text, where: `${relative(corpusDir, file)}:${i + 1}` }))
    .filter(({ text }) => text.trim() !== '')
    .map(({ text, where }) => {
      const o = JSON.parse(text) as {
        put?: string;
        update?: string;
        fields: Record<string, unknown>;
        message?: string;
        status?: 400 | 500;
      };
      return {
        kind: o.put !== undefined ? 'put' : 'update',
        id: (o.put ?? o.update)!,
        fields: o.fields,
        message: o.message,
        status: o.status,
        where,
      };
    });
}

function judge(model: DocumentModel, line: Line) {
  return judgeDocumentOperation(
    model,
    line.kind,
    line.id,
    line.id.split(':')[2],
    JSON.stringify({ fields: line.fields }),
  );
}

describe.each(packages)('corpus package %s', (name) => {
  const dir = join(corpusDir, name);
  const pkg = readPackageFiles(packageFiles(dir));
  const model = documentModelOf(pkg);
  const feed = readLines(join(dir, 'feed.jsonl'));
  const mutants = readLines(join(dir, 'mutants.jsonl'));

  it('deploys: schemas (with inheritance across files and .profile files beside them) read', () => {
    // A document type per schema file (a schema is named as its file), and every type the feed writes among them.
    const schemaFiles = [...packageFiles(dir).keys()]
      .filter((f) => f.endsWith('.sd'))
      .map((f) => f.slice(f.lastIndexOf('/') + 1, -3));
    expect([...model.types.keys()].sort()).toEqual(schemaFiles.sort());
    expect(feed.map((l) => l.id.split(':')[2]).filter((type) => !model.types.has(type))).toEqual([]);
  });

  it.each(feed.map((l) => [l.where, l] as const))('accepts %s', (_where, line) => {
    const verdict = judge(model, line);
    expect(verdict.ok ? verdict.ignoredFields : verdict.message).toBe(false);
  });

  it.each(mutants.map((l) => [l.where, l] as const))('refuses %s', (_where, line) => {
    expect(judge(model, line)).toEqual({ ok: false, status: line.status ?? 400, message: line.message });
  });

  it('has a mutant for every field of every feed document', () => {
    const covered = new Set(mutants.flatMap((m) => Object.keys(m.fields).map((f) => `${m.kind} ${m.id} ${f}`)));
    const missing = feed
      .flatMap((l) => Object.keys(l.fields).map((f) => `${l.kind} ${l.id} ${f}`))
      .filter((k) => !covered.has(k));
    expect(missing).toEqual([]);
  });
});

describe('the music package: inheritance, references and imported fields', () => {
  const model = documentModelOf(readPackageFiles(packageFiles(join(corpusDir, 'music'))));
  const id = 'id:mynamespace:music::a-head-full-of-dreams';
  it('gives music the fields of base, declared in another .sd file', () => {
    expect(judgeDocumentOperation(model, 'put', id, 'music', '{"fields":{"title":"t","tags":["a"]}}')).toMatchObject({
      ok: true,
    });
  });
  it('refuses an imported field in a put: it lives in the parent document', () => {
    expect(judgeDocumentOperation(model, 'put', id, 'music', '{"fields":{"artist_name":"Coldplay"}}')).toEqual({
      ok: false,
      status: 400,
      message: "Field 'artist_name' is not defined in document type 'music'",
    });
  });
});

describe('predicate texts (Predicate.g; the messages of PredicateParserTest and JsonReaderTestCase)', () => {
  it('parses the grammar: sets, ranges, partitions, negation, groups, quoted values, keywords as values', () => {
    for (const text of [
      'true',
      'FALSE',
      'a in [b]',
      'a not in [b, c]',
      '\'my key\' in ["v 1", x]',
      'in in [not, or]',
      'age in [..]',
      'age in [-5..+5]',
      'not (a in [b] or c in [d]) and e in [f]',
      'a in [1..9 (a=0+[1..2], a=-1 3)]',
    ]) {
      expect(predicateError(text), text).toBeUndefined();
    }
  });
  it('gives the tested messages', () => {
    expect(predicateError('a in b')).toBe("line 1:5 no viable alternative at input 'b'");
    expect(predicateError('a-b in [b]')).toBe("line 1:2 no viable alternative at character 'b'");
    expect(predicateError('timestamp > 9000')).toBe("line 1:10 no viable alternative at character '>'");
  });
});

describe('the same judgement end to end: deploy through the config server, then POST and PUT over loopback', () => {
  // A simulator per package: a later deploy without an earlier package's content cluster is refused.
  let sim: Simulator;
  let pool: Pool;
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, configPort: 0 });
    pool = new Pool(sim.url, { connections: 2 });
  });
  afterEach(async () => {
    await pool.close();
    await sim.close();
  });

  it.each(packages)(
    '%s: every feed operation is applied (200), its mutants refused with the same answer',
    async (name) => {
      const dir = join(corpusDir, name);
      const files = Object.fromEntries([...packageFiles(dir)].map(([p, b]) => [p, Buffer.from(b).toString('utf8')]));
      await deployPackage(sim.configUrl!, files);
      const path = (id: string): string => {
        const [, ns, type, group, ...rest] = id.split(':');
        const local = encodeURIComponent(rest.join(':'));
        const where = group.startsWith('g=')
          ? `group/${encodeURIComponent(group.slice(2))}`
          : group.startsWith('n=')
            ? `number/${group.slice(2)}`
            : 'docid';
        return `/document/v1/${ns}/${type}/${where}/${local}`;
      };
      // Every line, puts and updates in file order: what the judge accepts, the store must apply.
      for (const line of readLines(join(dir, 'feed.jsonl'))) {
        const applied = await call(pool, line.kind === 'put' ? 'POST' : 'PUT', path(line.id), { fields: line.fields });
        expect({ status: applied.status, json: applied.json }, line.where).toEqual({
          status: 200,
          json: { pathId: path(line.id), id: line.id },
        });
      }
      for (const m of readLines(join(dir, 'mutants.jsonl')).slice(0, 4)) {
        const answer = await call(pool, m.kind === 'put' ? 'POST' : 'PUT', path(m.id), { fields: m.fields });
        expect({ status: answer.status, json: answer.json }, m.where).toEqual({
          status: m.status ?? 400,
          json: { pathId: path(m.id), message: m.message },
        });
      }
    },
  );
});
