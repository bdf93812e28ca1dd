import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Pool } from 'undici';
import { startDocumentServer, type DocumentServer } from '../../src/simulator/document-api/document-server.js';
import { call as callVia } from './call.js';
import { tensorModel } from './tensor-fixtures.js';

/**
 * `format.tensors` on get and visit over loopback: tensor fields are written as the handler's
 * createTensorOptionsFromRequest (DocumentV1ApiHandler.java:708-725) and JsonFormat.encode (JsonFormat.java:62-105)
 * write them, whatever form they were fed in.
 */

const doc = '/document/v1/ns/vec/docid/a';
const id = 'id:ns:vec::a';
const fields = {
  title: 'one',
  d: [1.5, -2],
  f: { values: [0.1, 1] },
  b: [1.5, 3.14159],
  i: {
    cells: [
      { address: { x: '2' }, value: 127 },
      { address: { x: '0' }, value: 1 },
      { address: { x: '1' }, value: -1 },
    ],
  },
  s: {
    cells: [
      { address: { key: 'a' }, value: 1 },
      { address: { key: 'b' }, value: 2.5 },
    ],
  },
  mx: {
    blocks: [
      { address: { cat: 'p' }, values: [1, 2] },
      { address: { cat: 'q' }, values: [3, 4] },
    ],
  },
};

const short =
  '{"title":"one","d":{"type":"tensor(x[2])","values":[1.5,-2.0]},"f":{"type":"tensor<float>(x[2])","values":[0.10000000149011612,1.0]},' +
  '"b":{"type":"tensor<bfloat16>(x[2])","values":[1.5,3.140625]},"i":{"type":"tensor<int8>(x[3])","values":[1,-1,127]},' +
  '"s":{"type":"tensor(key{})","cells":{"a":1.0,"b":2.5}},"mx":{"type":"tensor<float>(cat{},x[2])","blocks":{"p":[1.0,2.0],"q":[3.0,4.0]}}}';
const hex =
  '{"title":"one","d":{"type":"tensor(x[2])","values":"3FF8000000000000C000000000000000"},"f":{"type":"tensor<float>(x[2])","values":"3DCCCCCD3F800000"},' +
  '"b":{"type":"tensor<bfloat16>(x[2])","values":"3FC04049"},"i":{"type":"tensor<int8>(x[3])","values":"01FF7F"},' +
  '"s":{"type":"tensor(key{})","cells":{"a":1.0,"b":2.5}},"mx":{"type":"tensor<float>(cat{},x[2])","blocks":{"p":"3F80000040000000","q":"4040000040800000"}}}';
const hexValue =
  '{"title":"one","d":"3FF8000000000000C000000000000000","f":"3DCCCCCD3F800000","b":"3FC04049","i":"01FF7F",' +
  '"s":{"a":1.0,"b":2.5},"mx":{"p":"3F80000040000000","q":"4040000040800000"}}';
const shortValue =
  '{"title":"one","d":[1.5,-2.0],"f":[0.10000000149011612,1.0],"b":[1.5,3.140625],"i":[1,-1,127],"s":{"a":1.0,"b":2.5},"mx":{"p":[1.0,2.0],"q":[3.0,4.0]}}';
const longValue =
  '{"title":"one","d":[{"address":{"x":"0"},"value":1.5},{"address":{"x":"1"},"value":-2.0}],' +
  '"f":[{"address":{"x":"0"},"value":0.10000000149011612},{"address":{"x":"1"},"value":1.0}],' +
  '"b":[{"address":{"x":"0"},"value":1.5},{"address":{"x":"1"},"value":3.140625}],' +
  '"i":[{"address":{"x":"0"},"value":1},{"address":{"x":"1"},"value":-1},{"address":{"x":"2"},"value":127}],' +
  '"s":[{"address":{"key":"a"},"value":1.0},{"address":{"key":"b"},"value":2.5}],' +
  '"mx":[{"address":{"cat":"p","x":"0"},"value":1.0},{"address":{"cat":"p","x":"1"},"value":2.0},{"address":{"cat":"q","x":"0"},"value":3.0},{"address":{"cat":"q","x":"1"},"value":4.0}]}';

let server: DocumentServer;
let pool: Pool;
const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  callVia(pool, method, path, body, headers);
const got = (fieldsJson: string): string =>
  `{"pathId":${JSON.stringify(doc)},"id":${JSON.stringify(id)},"fields":${fieldsJson}}`;

beforeAll(async () => {
  server = await startDocumentServer({ port: 0 });
  server.setDocumentModel(tensorModel);
  pool = new Pool(server.url, { connections: 1 });
});
afterAll(async () => {
  await pool.close();
  await server.close();
});
beforeEach(async () => {
  server.store.clear();
  const put = await call('POST', doc, { fields });
  expect(put.status, put.text).toBe(200);
});

describe('format.tensors on get', () => {
  it('writes the short form by default, whatever form the tensor was fed in', async () => {
    const r = await call('GET', doc);
    expect(r.status).toBe(200);
    expect(r.text).toBe(got(short));
  });

  it.each([
    ['short', short],
    ['hex', hex],
    ['hex-value', hexValue],
    ['short-value', shortValue],
    ['long-value', longValue],
  ])('format.tensors=%s', async (format, expected) => {
    const r = await call('GET', `${doc}?format.tensors=${format}`);
    expect(r.text).toBe(got(expected));
  });

  it('long: every cell with its address, wrapped with the type', async () => {
    const r = await call('GET', `${doc}?format.tensors=long&fieldSet=vec:d,s`);
    expect(r.text).toBe(
      got(
        '{"d":{"type":"tensor(x[2])","cells":[{"address":{"x":"0"},"value":1.5},{"address":{"x":"1"},"value":-2.0}]},"s":{"type":"tensor(key{})","cells":[{"address":{"key":"a"},"value":1.0},{"address":{"key":"b"},"value":2.5}]}}',
      ),
    );
  });

  it('takes an unknown, empty or repeated format.tensors as short, never a 400', async () => {
    for (const q of [
      'format.tensors=bogus',
      'format.tensors=',
      'format.tensors=hex&format.tensors=hex',
      'format.tensors=HEX',
    ]) {
      const r = await call('GET', `${doc}?${q}`);
      expect(r.status, q).toBe(200);
      expect(r.text, q).toBe(got(short));
    }
  });
});

describe('format.tensors on visit', () => {
  it('applies to JSONL streams and to the plain JSON object alike', async () => {
    const jsonl = await call('GET', '/document/v1/ns/vec/docid?stream=true&format.tensors=hex-value', undefined, {
      accept: 'application/jsonl',
    });
    expect(jsonl.text.split('\n')[0]).toBe(`{"put":${JSON.stringify(id)},"fields":${hexValue}}`);
    const plain = await call('GET', '/document/v1/ns/vec/docid?format.tensors=hex');
    expect(plain.text).toBe(
      `{"pathId":"/document/v1/ns/vec/docid","documents":[{"id":${JSON.stringify(id)},"fields":${hex}}],"documentCount":1}`,
    );
    const streamedObject = await call('GET', '/document/v1/ns/vec/docid?stream=true&format.tensors=short-value');
    expect(streamedObject.text).toBe(
      `{"pathId":"/document/v1/ns/vec/docid","documents":[{"id":${JSON.stringify(id)},"fields":${shortValue}}],"documentCount":1}`,
    );
  });

  it('stores what it renders: each form fed back reads as the same document', async () => {
    for (const [format, rendered] of [
      ['hex', hex],
      ['hex-value', hexValue],
      ['short-value', shortValue],
      ['long-value', longValue],
    ]) {
      const again = await call('POST', '/document/v1/ns/vec/docid/b', `{"fields":${rendered}}`);
      expect(again.status, `${format}: ${again.text}`).toBe(200);
      const back = await call('GET', '/document/v1/ns/vec/docid/b');
      expect(back.text, format).toBe(`{"pathId":"/document/v1/ns/vec/docid/b","id":"id:ns:vec::b","fields":${short}}`);
    }
  });
});

describe('a mixed tensor with several mapped dimensions', () => {
  const mm = '/document/v1/ns/vec/docid/mm';
  it('writes addressed blocks, which only the wrapped forms read back: a bare array of objects is cells (TensorReader.java:217-218)', async () => {
    expect(
      (await call('POST', mm, { fields: { mm: { blocks: [{ address: { a: 'u', b: 'v' }, values: [1, 2] }] } } }))
        .status,
    ).toBe(200);
    const hexForm =
      '{"type":"tensor(a{},b{},x[2])","blocks":[{"address":{"a":"u","b":"v"},"values":"3FF00000000000004000000000000000"}]}';
    expect((await call('GET', `${mm}?format.tensors=hex&fieldSet=vec:mm`)).text).toBe(
      `{"pathId":"${mm}","id":"id:ns:vec::mm","fields":{"mm":${hexForm}}}`,
    );
    const valueForm = '[{"address":{"a":"u","b":"v"},"values":"3FF00000000000004000000000000000"}]';
    expect((await call('GET', `${mm}?format.tensors=hex-value&fieldSet=vec:mm`)).text).toBe(
      `{"pathId":"${mm}","id":"id:ns:vec::mm","fields":{"mm":${valueForm}}}`,
    );
    expect((await call('POST', mm, `{"fields":{"mm":${hexForm}}}`)).status).toBe(200);
    const refused = await call('POST', mm, `{"fields":{"mm":${valueForm}}}`);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      pathId: mm,
      message:
        "In document 'id:ns:vec::mm': Could not parse field 'mm' of type tensor(a{},b{},x[2]): Missing a label for dimension 'x' for tensor(a{},b{},x[2])",
    });
  });
});
