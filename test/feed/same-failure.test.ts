import { describe, expect, it } from 'vitest';
import { SameFailureRule, reasonClass } from '../../src/feed/same-failure.js';

const vespa404 = Buffer.from('{"pathId":"/document/v1/ns/t/docid/x","id":"id:ns:t::x"}');
const config404 = Buffer.from('{"error-code":"NOT_FOUND","message":"Nothing at path \'/document/v1/ns/t/docid/x\'"}');
const typeMissing = (i: number) =>
  Buffer.from(`{"pathId":"/document/v1/ns/nosuch/docid/d${i}","message":"Document type nosuch does not exist"}`);

function run(
  rule: SameFailureRule,
  n: number,
  status: number,
  message: (i: number) => string,
  body?: (i: number) => Buffer,
) {
  for (let i = 0; i < n; i++) {
    const v = rule.failed(status, message(i), body?.(i));
    if (v !== undefined) return { at: i + 1, v };
  }
  return undefined;
}

describe('SameFailureRule', () => {
  it('stops at the 100th identical final 4xx with the first reason, and a hint for an unknown type', () => {
    const stop = run(new SameFailureRule(), 500, 400, () => 'Document type nosuch does not exist', typeMissing);
    expect(stop?.at).toBe(100);
    expect(stop?.v).toMatchObject({ count: 100, status: 400, message: 'Document type nosuch does not exist' });
    expect(stop?.v.hint).toMatch(/document type/);
  });

  it('takes messages that differ only by document id or number as the same', () => {
    const stop = run(
      new SameFailureRule(),
      200,
      400,
      (i) => `Error in document 'id:ns:t::d${i}' - field 'x': bad value ${i}`,
    );
    expect(stop?.v.message).toBe("Error in document 'id:ns:t::d0' - field 'x': bad value 0");
    expect(reasonClass("in 'id:ns:t::a1' at 12")).toBe(reasonClass("in 'id:ns:t::zz' at 7"));
  });

  it("names the config server for its 404, and the document API's port for another server's", () => {
    expect(
      run(
        new SameFailureRule(),
        100,
        404,
        () => 'Nothing at path',
        () => config404,
      )?.v.hint,
    ).toBe('this looks like the config server; the document API is on port 8080');
    expect(
      run(
        new SameFailureRule(),
        100,
        404,
        () => 'an HTML page',
        () => Buffer.from('<html>no</html>'),
      )?.v.hint,
    ).toMatch(/port 8080/);
  });

  it('never stops after a success, a different failure, or failures that say something of one document', () => {
    const afterSuccess = new SameFailureRule();
    afterSuccess.succeeded();
    expect(run(afterSuccess, 300, 400, () => 'same')).toBeUndefined();
    const mixed = new SameFailureRule();
    expect(run(mixed, 50, 400, () => 'one')).toBeUndefined();
    expect(run(mixed, 300, 400, () => 'another')).toBeUndefined();
    for (const status of [404, 408, 412, 429, 401, 403, 500, 503]) {
      expect(
        run(
          new SameFailureRule(),
          300,
          status,
          () => 'same',
          () => vespa404,
        ),
        `status ${status}`,
      ).toBeUndefined();
    }
    expect(new SameFailureRule().failed(undefined, 'connection reset', undefined)).toBeUndefined();
  });
});
