import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDocumentId, parseDocumentId, toDocumentPath } from '../../src/document/id.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import { parseDocumentPath } from '../../src/simulator/document-api/document-path.js';
import { nastyText, validDocumentId, writableDocumentId } from './arbitraries.js';

/** parse either succeeds or throws VB_BAD_DOCUMENT_ID that names the id and says why. */
function parsesOrNamesTheReason(id: string): void {
  let parsed;
  try {
    parsed = parseDocumentId(id);
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_BAD_DOCUMENT_ID')).toBe(true);
    const e = err as { message: string; place?: { documentId?: string } };
    expect(e.place?.documentId).toBe(id);
    expect(e.message.startsWith(`invalid document id '${id.slice(0, 200)}`)).toBe(true);
    // A reason follows the quoted id.
    expect(e.message.slice(e.message.lastIndexOf("': ") + 3).length).toBeGreaterThan(3);
    return;
  }
  expect(formatDocumentId(parsed)).toBe(id);
}

describe('document id parser (property)', () => {
  it('never crashes on random text, and every rejection names the id and a reason', () => {
    fc.assert(fc.property(fc.string({ maxLength: 80, unit: 'grapheme' }), parsesOrNamesTheReason), { numRuns: 2000 });
    fc.assert(fc.property(fc.string({ maxLength: 40, unit: 'binary' }), parsesOrNamesTheReason), { numRuns: 1000 });
    // Near-misses: the right prefix and colons with nasty parts in between.
    const nearMiss = fc.tuple(
      fc.constantFrom('id:', 'id::', 'id:ns:', 'ID:', 'id:ns:t:', 'id:ns:t:n=', 'id:ns:t:g=', 'id:ns:t:x=', ''),
      nastyText({ maxPieces: 6 }),
    );
    fc.assert(
      fc.property(nearMiss, ([a, b]) => parsesOrNamesTheReason(a + b)),
      { numRuns: 2000 },
    );
  });

  it('round-trips valid ids through format, and those /document/v1 can carry through the path encoder and the server path parser', () => {
    fc.assert(
      fc.property(validDocumentId, (id) => {
        expect(formatDocumentId(parseDocumentId(id))).toBe(id);
      }),
      { numRuns: 1500 },
    );
    fc.assert(
      fc.property(writableDocumentId, (id) => {
        const path = toDocumentPath(id);
        // Only characters a client sends unescaped, and no segment a server would normalise away.
        expect(path).toMatch(/^\/document\/v1(\/[A-Za-z0-9\-_.!~*'()%]+)+$/);
        expect(path.split('/').every((s) => s !== '.' && s !== '..')).toBe(true);
        const route = parseDocumentPath(path);
        expect(route).toMatchObject({ kind: 'document', id });
      }),
      { numRuns: 1500 },
    );
  });

  // A lone UTF-16 surrogate has no UTF-8 form: encodeURIComponent would throw URIError in toDocumentPath.
  it('refuses ids with lone surrogates as VB_BAD_DOCUMENT_ID rather than failing in the encoder', () => {
    const id = 'id:ns:music::a\ud800b';
    let error: unknown;
    try {
      toDocumentPath(id);
    } catch (err) {
      error = err;
    }
    expect(isVespaBulkError(error, 'VB_BAD_DOCUMENT_ID')).toBe(true);
  });
});
