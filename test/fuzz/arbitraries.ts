import fc from 'fast-check';

/**
 * Generators for the fuzz tests: document ids built from the characters that break naive path handling
 * (`:`, `/`, `+`, `%`, spaces, dots, query and fragment marks, unicode, tab/LF/CR), and raw request paths.
 */
export const nastyPieces = [
  ':',
  '/',
  '+',
  '%',
  ' ',
  '\t',
  '\n',
  '\r',
  '?',
  '#',
  '&',
  '=',
  '.',
  '..',
  '~',
  '\\',
  '"',
  "'",
  '<',
  '>',
  '[',
  ']',
  '{',
  '}',
  '|',
  '^',
  '`',
  '*',
  '%2F',
  '%25',
  '%zz',
  '%2',
  'a',
  'B',
  '9',
  '-',
  '_',
  'é',
  'ø',
  '日本',
  '😀',
  '\u00a0',
  '\u200b',
  '\ufeff',
  'id:',
  'docid',
  'group',
  'number',
] as const;

const piece = fc.oneof(fc.constantFrom(...nastyPieces), fc.string({ minLength: 1, maxLength: 3, unit: 'grapheme' }));

/** A non-empty string of nasty pieces, optionally without some characters. */
export function nastyText(options: { without?: string; maxPieces?: number } = {}): fc.Arbitrary<string> {
  const without = options.without ?? '';
  return fc
    .array(piece, { minLength: 1, maxLength: options.maxPieces ?? 8 })
    .map((parts) => [...parts.join('')].filter((c) => !without.includes(c)).join(''))
    .filter((s) => s !== '');
}

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String);

function documentIds(number: fc.Arbitrary<string>) {
  return fc.record({
    namespace: nastyText({ without: ':', maxPieces: 4 }),
    type: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
    kind: fc.oneof(
      fc.constant(''),
      number.map((n) => `n=${n}`),
      nastyText({ without: ':', maxPieces: 3 }).map((g) => `g=${g}`),
    ),
    local: nastyText(),
  });
}

/** Valid document ids of all three kinds, with nasty namespaces, groups and local parts. */
export const validDocumentId: fc.Arbitrary<string> = documentIds(int64).map(
  ({ namespace, type, kind, local }) => `id:${namespace}:${type}:${kind}:${local}`,
);

const dotSegment = (s: string): boolean => s === '.' || s === '..';

/**
 * The valid ids /document/v1 can carry, which is what a round trip through the service can hold: it reads the
 * path's number as unsigned (no negative `n`), and refuses a path segment that decodes to '.' or '..'.
 */
export const writableDocumentId: fc.Arbitrary<string> = documentIds(
  fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String),
)
  .filter(({ namespace, kind, local }) => !dotSegment(namespace) && !dotSegment(kind.slice(2)) && !dotSegment(local))
  .map(({ namespace, type, kind, local }) => `id:${namespace}:${type}:${kind}:${local}`);

const pathPieces = [
  '/',
  '/document/v1',
  '/document/v1/',
  'ns',
  'music',
  'docid',
  'group',
  'number',
  'g1',
  '42',
  '-9',
  '99999999999999999999',
  'x',
  '%',
  '%zz',
  '%2F',
  '%3A',
  '%00',
  '%01',
  '%09',
  '%E2%82',
  '%C3%A9',
  '.',
  '..',
  '%2e',
  '%2E%2E',
  '//',
  '?',
  '&',
  '=',
  'selection=',
  'cluster=',
  'content',
  'wantedDocumentCount=',
  'continuation=',
  'timeout=',
  'fieldSet=',
  '[all]',
  'stream=true',
  'dryRun=',
  'route=',
  'create=true',
  'condition=',
  ':',
  '+',
  '_sim',
  'faults',
] as const;

/** Raw request paths: mostly /document/v1 shapes, with broken encodings, dots and odd query parameters. */
export const rawPath: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('/document/v1/', '/document/v1/ns/music/', '/document/v1/ns/music/docid/', '/', '/document/v1'),
    fc.array(fc.oneof(fc.constantFrom(...pathPieces), fc.stringMatching(/^[\x21-\x7e]{1,4}$/)), { maxLength: 10 }),
  )
  .map(([start, parts]) => start + parts.join(''))
  // The path may not carry a fragment or bytes HTTP forbids; the client would refuse it before sending.
  .map((p) => p.replace(/#/g, '%23'));

export const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

const selectionPieces = [
  'music',
  'music.year',
  'music.title',
  'id',
  'id.namespace',
  'id.user',
  'id.group',
  'id.specific',
  'now()',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=~',
  '=',
  ' and ',
  ' or ',
  'not ',
  '(',
  ')',
  '"',
  "'",
  '"abc"',
  "'x*'",
  '1',
  '-3.5',
  '1e9',
  'null',
  'true',
  'false',
  '.',
  ',',
  '[',
  ']',
  '{',
  '}',
  '$',
  '#',
  '\\',
  ' ',
  '0x10',
  '9223372036854775808',
  'music.tags{k}',
  'music.tags[0]',
  '.lowercase()',
  '.hash()',
  '.abs()',
  'id.user==1',
  'éø',
  '😀',
  '\t',
] as const;

/** Document selection text: fragments of the language glued at random, plus random strings. */
export const selectionText: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.constantFrom(...selectionPieces), { minLength: 1, maxLength: 12 }).map((p) => p.join('')),
  fc.string({ maxLength: 40, unit: 'grapheme' }),
);
