import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigServer, type ConfigServer } from '../../../src/simulator/config-server/config-server.js';
import { parseXml, XmlSyntaxError } from '../../../src/schema/xml.js';
import { rawRequest, sampleFiles, zipFiles } from '../../deploy/fixtures.js';

/** Entities and DTDs in a package do nothing: no expansion, no file read, a quick and clear 400. */
const billionLaughs = [
  '<?xml version="1.0"?>',
  '<!DOCTYPE services [',
  '  <!ENTITY lol "lol">',
  ...Array.from({ length: 9 }, (_, i) => `  <!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`),
  ']>',
  '<services version="1.0"><container id="default" version="1.0">&lol9;</container></services>',
].join('\n');

const secret = 'not-for-the-config-server-4f1c';
let dir: string;
let secretUrl: string;
let server: ConfigServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vespa-bulk-xxe-'));
  await writeFile(join(dir, 'secret.txt'), secret);
  secretUrl = `file://${join(dir, 'secret.txt')}`;
  server = await startConfigServer({ port: 0 });
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function upload(servicesXml: string): Promise<{ status: number; text: string; json: any }> {
  return rawRequest(
    server.url,
    'POST',
    '/application/v2/tenant/default/session',
    zipFiles({ ...sampleFiles(), 'services.xml': servicesXml }),
    { 'content-type': 'application/zip' },
  );
}

describe('entities and DTDs in application packages', () => {
  it('refuses a billion-laughs services.xml at once, without expanding it', async () => {
    const res = await upload(billionLaughs);
    expect(res.status).toBe(400);
    expect(res.json['error-code']).toBe('INVALID_APPLICATION_PACKAGE');
    expect(res.json.message).toMatch(
      /services.xml is not well-formed XML: line 2, column 1: DOCTYPE with an internal subset is not supported/,
    );
    expect(res.text).not.toContain('lollollol');
    expect(res.text.length).toBeLessThan(1000);
  });

  it('never reads an external SYSTEM entity', async () => {
    const xxe = `<?xml version="1.0"?>\n<!DOCTYPE services [<!ENTITY xxe SYSTEM "${secretUrl}">]>\n<services version="1.0"><container id="default" version="1.0"><search>&xxe;</search></container></services>`;
    const res = await upload(xxe);
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/internal subset/);
    expect(res.text).not.toContain(secret);
  });

  it('ignores an external DTD and refuses the entities it would declare', async () => {
    const withDtd = (body: string): string =>
      `<?xml version="1.0"?>\n<!DOCTYPE services SYSTEM "${secretUrl}">\n${body}`;
    const plain = sampleFiles()['services.xml'].replace(/^<\?xml[^>]*\?>\n/, '');
    // Today's behaviour for a valid package with a bare DOCTYPE: accepted, the DTD never fetched.
    expect((await upload(withDtd(plain))).status).toBe(200);
    const res = await upload(
      withDtd(
        '<services version="1.0"><container id="default" version="1.0"><search>&xxe;</search></container></services>',
      ),
    );
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/unknown entity &xxe;/);
    expect(res.text).not.toContain(secret);
  });

  it('parseXml refuses the same payloads with an XmlSyntaxError', () => {
    expect(() => parseXml(billionLaughs)).toThrow(XmlSyntaxError);
    expect(() => parseXml('<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>')).toThrow(/internal subset/);
    expect(() =>
      parseXml('<!-- a comment --><!DOCTYPE a PUBLIC "-//x//y" "http://127.0.0.1:9/a.dtd"><a>&e;</a>'),
    ).toThrow(/unknown entity &e;/);
    expect(parseXml('<!DOCTYPE a SYSTEM "a.dtd"><a x="&#65;&amp;">&lt;b&gt;<![CDATA[&amp;]]></a>')).toMatchObject({
      name: 'a',
      attributes: { x: 'A&' },
      text: '<b>&amp;',
    });
  });

  it('gives each element its line', () => {
    const root = parseXml(
      '<?xml version="1.0"?>\n<services>\n  <content id="c">\n    <documents/>\n  </content>\n</services>\n',
    );
    expect(root.line).toBe(2);
    expect(root.children[0].line).toBe(3);
    expect(root.children[0].children[0].line).toBe(4);
  });
});
