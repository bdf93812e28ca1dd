import { describe, expect, it } from 'vitest';
import { documentTypesOf, type DocumentModel } from '../../src/schema/document-model.js';
import { judgeDocumentOperation, type Verdict } from '../../src/schema/judge.js';
import { parseSchema } from '../../src/schema/sd-schema.js';

/** Verdicts corrected against ../shared/vespa-schema-facts.md, kept apart from the pinned judge cases. */
const sd =
  'schema links { document links { field u type uri { indexing: summary } field us type array<uri> { indexing: summary } } }';
const model: DocumentModel = {
  types: documentTypesOf([parseSchema(sd, 'links.sd')]),
  ignoreUndefinedFields: false,
  documentApi: true,
};
const id = 'id:ns:links::1';

function put(fields: string): Verdict {
  return judgeDocumentOperation(model, 'put', id, 'links', `{"fields":${fields}}`);
}
function update(fields: string): Verdict {
  return judgeDocumentOperation(model, 'update', id, 'links', `{"fields":${fields}}`);
}

describe('uri: the text check, then com.yahoo.net.Url (facts E, uri)', () => {
  it('accepts what the Url pattern matches with a numeric port or none', () => {
    for (const u of [
      '"http://example.com:8080/a?b=c#d"',
      '"http://[::1]:80/"',
      '"/relative/path"',
      '"mailto:x@y"',
      '""',
      '"http://h:+5/"',
      '2001',
    ]) {
      expect(put(`{"u":${u}}`), u).toMatchObject({ ok: true });
    }
  });
  it('refuses a port that is not a Java int with the NumberFormatException message', () => {
    expect(put('{"u":"http://example.com:abc/x"}')).toEqual({
      ok: false,
      status: 400,
      message: `In document '${id}': Could not parse field 'u' of type uri: For input string: "abc"`,
    });
    expect(put('{"u":"http://example.com:99999999999"}')).toEqual({
      ok: false,
      status: 400,
      message: `In document '${id}': Could not parse field 'u' of type uri: For input string: "99999999999"`,
    });
    expect(put('{"us":["http://a/","http://b:x/"]}')).toMatchObject({
      ok: false,
      status: 400,
      message: `In document '${id}': Could not parse field 'us' of type Array<uri>: For input string: "x"`,
    });
    expect(update('{"u":{"assign":"http://a:b/"}}')).toEqual({
      ok: false,
      status: 400,
      message: `Error in 'u': For input string: "b"`,
    });
  });
  it('refuses a fragment holding a line end (Java\'s "." does not match it) as a malformed URL', () => {
    expect(put('{"u":"http://a/#x\\ny"}')).toEqual({
      ok: false,
      status: 400,
      message: `In document '${id}': Could not parse field 'u' of type uri: Malformed URL.`,
    });
    expect(put('{"u":"http://a/x\\ny"}')).toMatchObject({ ok: true });
  });
});
