import { describe, expect, it } from 'vitest';
import { createTar } from 'nanotar';
import { gzipSync, strToU8, zipSync } from 'fflate';
import { parseXml, XmlSyntaxError } from '../../../src/schema/xml.js';
import { parseSchema, SchemaError } from '../../../src/schema/sd-schema.js';
import { readApplicationPackage, InvalidPackageError, servedDocumentTypes } from '../../../src/schema/app-package.js';
import { compareDeployments } from '../../../src/simulator/config-server/change-actions.js';
import {
  listDirectory,
  parseContentPath,
  contentTypeOf,
} from '../../../src/simulator/config-server/package-content.js';
import { ConfigServerError } from '../../../src/simulator/config-server/deployments.js';
import { sampleFiles, withMusicField, zipFiles } from '../../deploy/fixtures.js';

describe('parseXml (well-formedness)', () => {
  it('reads elements, attributes, entities, CDATA and skips comments and the declaration', () => {
    const root = parseXml(
      '<?xml version="1.0"?>\n<!-- c --><services version="1.0"><a x=\'1 &amp; 2\'>t&lt;<![CDATA[<raw>]]></a><b/></services>\n',
    );
    expect(root.name).toBe('services');
    expect(root.attributes.version).toBe('1.0');
    expect(root.children.map((c) => c.name)).toEqual(['a', 'b']);
    expect(root.children[0].attributes.x).toBe('1 & 2');
    expect(root.children[0].text).toBe('t<<raw>');
  });

  it.each([
    ['<a><b></a>', /does not match <b>/],
    ['<a>', /not closed/],
    ['<a x=1/>', /must be quoted/],
    ['<a x="1" x="2"/>', /appears twice/],
    ['<a>&nbsp;</a>', /unknown entity/],
    ['<a>AT&T</a>', /entity reference/],
    ['<a/><b/>', /second root/],
    ['text', /outside the root/],
    ['<a><!-- x -- y --></a>', /'--' is not allowed/],
    ['', /no root element/],
    ['<a>\n</b>', /line 2/],
    ['<a x="<"/>', /'<' is not allowed/],
  ])('rejects %j', (source, message) => {
    expect(() => parseXml(source)).toThrow(XmlSyntaxError);
    expect(() => parseXml(source)).toThrow(message);
  });
});

describe('parseSchema', () => {
  it('reads the document fields of the sample schemas with types and indexing aspects', () => {
    const music = parseSchema(sampleFiles()['schemas/music.sd'], 'schemas/music.sd');
    expect(music.name).toBe('music');
    expect(music.documentName).toBe('music');
    expect([...music.fields.keys()]).toEqual([
      'title',
      'artist',
      'year',
      'duration',
      'genres',
      'popularity',
      'ratings',
    ]);
    expect(music.fields.get('ratings')!.type).toBe('map<string,int>');
    expect(music.fields.get('genres')!.type).toBe('array<string>');
    expect(music.fields.get('artist')!.aspects).toEqual(['attribute', 'index', 'summary']);
    const user = parseSchema(sampleFiles()['schemas/user.sd'], 'schemas/user.sd');
    expect([...user.fields.keys()]).toEqual(['name', 'age', 'email', 'tags', 'scores', 'location']);
    expect(user.fields.get('scores')!.type).toBe('weightedset<string>');
  });

  it('ignores braces in comments and strings, reads multi-line indexing blocks', () => {
    const s = parseSchema(
      'schema a { # {\n document a {\n field f type string { indexing { "}" | summary | index; } }\n }\n}\n',
      'a.sd',
    );
    expect(s.fields.get('f')!.aspects).toEqual(['index', 'summary']);
  });

  it('rejects a schema without a document, unbalanced braces and a missing schema declaration', () => {
    expect(() => parseSchema('schema a { fieldset x { fields: y } }', 'schemas/a.sd')).toThrow(
      /does not declare a document/,
    );
    expect(() => parseSchema('schema a { document a { ', 'schemas/a.sd')).toThrow(SchemaError);
    expect(() => parseSchema('schema a { } }', 'schemas/a.sd')).toThrow(/without a matching/);
    expect(() => parseSchema('document a { }', 'schemas/a.sd')).toThrow(/no 'schema <name>/);
  });
});

describe('readApplicationPackage', () => {
  it('reads the sample package: clusters, document types, schemas', () => {
    const pkg = readApplicationPackage(zipFiles(sampleFiles()), 'zip');
    expect(pkg.containers).toEqual([{ id: 'default', documentApi: true, ignoreUndefinedFields: false }]);
    expect(pkg.contents).toEqual([
      {
        id: 'content',
        documents: [
          { type: 'music', mode: 'index', global: false },
          { type: 'user', mode: 'index', global: false },
          { type: 'product', mode: 'index', global: false },
        ],
      },
    ]);
    expect(servedDocumentTypes(pkg)).toEqual(['music', 'user', 'product']);
    expect(pkg.fileReference).toMatch(/^[0-9a-f]{16}$/);
  });

  it('reads a gzipped tar and a zip whose files sit under one top directory', () => {
    const files = sampleFiles();
    const tgz = gzipSync(createTar(Object.entries(files).map(([name, data]) => ({ name: `app/${name}`, data }))));
    expect(servedDocumentTypes(readApplicationPackage(tgz, 'gzip'))).toEqual(['music', 'user', 'product']);
    const nested = zipSync(Object.fromEntries(Object.entries(files).map(([p, t]) => [`app/${p}`, strToU8(t)])));
    expect([...readApplicationPackage(nested, 'zip').files.keys()].sort()).toEqual([
      'schemas/music.sd',
      'schemas/product.sd',
      'schemas/user.sd',
      'services.xml',
    ]);
  });

  it.each([
    ['not an archive', () => readApplicationPackage(strToU8('hello, not a zip'), 'zip'), /not a valid zip/],
    [
      'gzip of no tar',
      () => readApplicationPackage(gzipSync(strToU8('plain text, no tar here')), 'gzip'),
      /not a tar archive/,
    ],
    ['not gzip', () => readApplicationPackage(strToU8('plain'), 'gzip'), /not a valid gzip/],
    [
      'no services.xml',
      () => readApplicationPackage(zipFiles({ 'hosts.xml': '<hosts/>' }), 'zip'),
      /services.xml not found/,
    ],
    [
      'bad XML',
      () => readApplicationPackage(zipFiles({ 'services.xml': '<services><content></services>' }), 'zip'),
      /services.xml is not well-formed XML: line 1/,
    ],
    [
      'wrong root',
      () => readApplicationPackage(zipFiles({ 'services.xml': '<hosts/>' }), 'zip'),
      /root element must be <services>/,
    ],
    [
      'schema without document',
      () => readApplicationPackage(zipFiles({ ...sampleFiles(), 'schemas/user.sd': 'schema user { }' }), 'zip'),
      /schemas\/user.sd: schema 'user' does not declare a document/,
    ],
    [
      'schema file name',
      () =>
        readApplicationPackage(
          zipFiles({ ...sampleFiles(), 'schemas/other.sd': 'schema x { document x { } }' }),
          'zip',
        ),
      /must be in a file named 'x.sd'/,
    ],
    [
      'undefined document type',
      () =>
        readApplicationPackage(
          zipFiles({
            ...sampleFiles(),
            'services.xml': sampleFiles()['services.xml'].replace('type="user"', 'type="book"'),
          }),
          'zip',
        ),
      /document type 'book', which no schema defines/,
    ],
    [
      'zip slip',
      () => readApplicationPackage(zipFiles({ ...sampleFiles(), '../evil.txt': 'x' }), 'zip'),
      /points outside the package/,
    ],
  ])('rejects %s', (_name, read, message) => {
    expect(read).toThrow(InvalidPackageError);
    expect(read).toThrow(message);
  });
});

describe('compareDeployments', () => {
  const today = '2026-01-15';
  const base = readApplicationPackage(zipFiles(sampleFiles()), 'zip');
  const next = (files: Record<string, string>) => readApplicationPackage(zipFiles(files), 'zip');

  it('reports nothing for a first deployment or an unchanged package', () => {
    expect(compareDeployments(undefined, base, today)).toEqual({
      actions: { restart: [], refeed: [], reindex: [] },
      failures: [],
    });
    expect(compareDeployments(base, next(sampleFiles()), today).actions).toEqual({
      restart: [],
      refeed: [],
      reindex: [],
    });
  });

  it('a changed field type needs a refeed and a field-type-change override', () => {
    const changed = next(
      withMusicField(sampleFiles(), 'year', 'field year type long { indexing: summary | attribute }'),
    );
    const report = compareDeployments(base, changed, today);
    expect(report.actions.refeed).toHaveLength(1);
    expect(report.actions.refeed[0]).toMatchObject({
      name: 'field-type-change',
      documentType: 'music',
      clusterName: 'content',
    });
    expect(report.actions.refeed[0].messages[0]).toContain("'int' -> 'long'");
    expect(report.failures.map((f) => f.id)).toEqual(['field-type-change']);
  });

  it('a validation override with a future date allows the change; an expired one does not', () => {
    const files = withMusicField(sampleFiles(), 'year', 'field year type long { indexing: summary | attribute }');
    const allowed = next({
      ...files,
      'validation-overrides.xml':
        '<validation-overrides><allow until="2026-01-20">field-type-change</allow></validation-overrides>',
    });
    expect(compareDeployments(base, allowed, today).failures).toEqual([]);
    const expired = next({
      ...files,
      'validation-overrides.xml':
        '<validation-overrides><allow until="2026-01-01">field-type-change</allow></validation-overrides>',
    });
    expect(compareDeployments(base, expired, today).failures).toHaveLength(1);
  });

  it('adding an index to a field needs a reindex; dropping an attribute needs a restart', () => {
    const indexed = next(
      withMusicField(sampleFiles(), 'duration', 'field duration type int { indexing: summary | attribute | index }'),
    );
    const r1 = compareDeployments(base, indexed, today);
    expect(r1.actions.reindex.map((a) => [a.documentType, a.clusterName, a.name])).toEqual([
      ['music', 'content', 'indexing-change'],
    ]);
    expect(r1.failures).toEqual([]);
    const noAttribute = next(
      withMusicField(sampleFiles(), 'duration', 'field duration type int { indexing: summary }'),
    );
    const r2 = compareDeployments(base, noAttribute, today);
    expect(r2.actions.restart).toHaveLength(1);
    expect(r2.actions.restart[0]).toMatchObject({
      clusterName: 'content',
      clusterType: 'content',
      serviceType: 'searchnode',
    });
    expect(r2.actions.restart[0].messages[0]).toContain('remove attribute aspect');
  });

  it('removing a document type from a cluster needs a content-type-removal override', () => {
    const files = sampleFiles();
    const removed = next({
      ...files,
      'services.xml': files['services.xml'].replace('<document type="user" mode="index"/>', ''),
    });
    expect(compareDeployments(base, removed, today).failures.map((f) => f.id)).toEqual(['content-type-removal']);
  });
});

describe('package content paths', () => {
  const files = new Map([
    ['services.xml', new Uint8Array()],
    ['schemas/music.sd', new Uint8Array()],
    ['schemas/sub/x.txt', new Uint8Array()],
  ]);

  it('lists a directory, recursively or not, with directories ending in /', () => {
    expect(listDirectory(files, '', false)).toEqual(['schemas/', 'services.xml']);
    expect(listDirectory(files, 'schemas', false)).toEqual(['schemas/music.sd', 'schemas/sub/']);
    expect(listDirectory(files, '', true)).toEqual([
      'schemas/',
      'schemas/music.sd',
      'schemas/sub/',
      'schemas/sub/x.txt',
      'services.xml',
    ]);
    expect(listDirectory(files, 'nope', false)).toBeUndefined();
  });

  it('decodes segments one by one and refuses anything climbing out', () => {
    expect(parseContentPath(['schemas', 'music.sd'])).toEqual({ path: 'schemas/music.sd', directory: false });
    expect(parseContentPath(['schemas', ''])).toEqual({ path: 'schemas', directory: true });
    expect(parseContentPath([])).toEqual({ path: '', directory: true });
    for (const bad of [['..', 'x'], ['%2e%2e', 'x'], ['a', '%2E%2E'], ['a%2F..%2Fb'], ['.'], ['a', '', 'b'], ['%zz']]) {
      expect(() => parseContentPath(bad)).toThrow(ConfigServerError);
    }
  });

  it('types files by extension', () => {
    expect(contentTypeOf('services.xml')).toBe('application/xml');
    expect(contentTypeOf('models/a.json')).toBe('application/json');
    expect(contentTypeOf('schemas/music.sd')).toBe('text/plain');
  });
});
