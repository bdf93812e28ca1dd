import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isVespaBulkError, VespaBulkError } from '../../src/core/errors.js';
import { parseSelection, referencedTypes, type BoolNode } from '../../src/selection/index.js';

/** The error parseSelection throws for `text`, checked to be a selection syntax error. */
function syntaxErrorOf(text: string): VespaBulkError {
  try {
    parseSelection(text);
  } catch (err) {
    expect(isVespaBulkError(err, 'VB_SELECTION_SYNTAX')).toBe(true);
    return err as VespaBulkError;
  }
  throw new Error(`expected a syntax error for ${JSON.stringify(text)}`);
}

/** A compact rendering of the tree, to assert grouping: (and a b), (not a), (== f 1). */
function shape(node: BoolNode): string {
  switch (node.kind) {
    case 'constant':
      return String(node.value);
    case 'doctype':
      return node.type;
    case 'not':
      return `(not ${shape(node.operand)})`;
    case 'and':
    case 'or':
      return `(${node.kind} ${shape(node.left)} ${shape(node.right)})`;
    case 'compare':
      return `(${node.op} ${valueShape(node.left)} ${valueShape(node.right)})`;
  }
}

function valueShape(node: Extract<BoolNode, { kind: 'compare' }>['left']): string {
  switch (node.kind) {
    case 'null':
      return 'null';
    case 'number':
      return String(node.value);
    case 'string':
      return JSON.stringify(node.value);
    case 'now':
      return 'now()';
    case 'id':
      return node.part === undefined ? 'id' : `id.${node.part}`;
    case 'field':
      return `${node.type}.${node.field}${node.path.map((s) => (s.kind === 'field' ? `.${s.name}` : s.kind === 'key' ? `{${s.key}}` : `[${s.index}]`)).join('')}`;
    case 'arith':
      return `(${node.op} ${valueShape(node.left)} ${valueShape(node.right)})`;
    case 'negate':
      return `(neg ${valueShape(node.operand)})`;
    case 'call':
      return `${valueShape(node.operand)}.${node.name}()`;
  }
}

const parsed = (text: string): string => shape(parseSelection(text).root);

describe('parseSelection: precedence and grouping', () => {
  it('binds and tighter than or', () => {
    expect(parsed('a or b and c')).toBe('(or a (and b c))');
    expect(parsed('a and b or c and d')).toBe('(or (and a b) (and c d))');
  });

  it('binds not tighter than and, and not applies to a whole comparison', () => {
    expect(parsed('not a and b')).toBe('(and (not a) b)');
    expect(parsed('not music.x == 1')).toBe('(not (== music.x 1))');
    expect(parsed('not not a')).toBe('(not (not a))');
  });

  it('lets parentheses override precedence, for conditions and for values', () => {
    expect(parsed('a and (b or c) and d')).toBe('(and (and a (or b c)) d)');
    expect(parsed('(music.a + 1) * 2 > 3')).toBe('(> (* (+ music.a 1) 2) 3)');
    expect(parsed('((music.a)) == 1')).toBe('(== music.a 1)');
  });

  it('is left-associative for and/or and arithmetic', () => {
    expect(parsed('a or b or c')).toBe('(or (or a b) c)');
    expect(parsed('music.a - 1 - 2 == 0')).toBe('(== (- (- music.a 1) 2) 0)');
  });

  it('gives % precedence over * and /, which bind tighter than + and -, as Vespa does', () => {
    expect(parsed('music.a + 2 * 3 == 1')).toBe('(== (+ music.a (* 2 3)) 1)');
    expect(parsed('music.a * 7 % 3 == 1')).toBe('(== (* music.a (% 7 3)) 1)');
  });

  it('reads keywords in any case', () => {
    expect(parsed('a AND b Or NOT c')).toBe('(or (and a b) (not c))');
    expect(parsed('TRUE and False')).toBe('(and true false)');
    expect(parsed('music.x == NULL')).toBe('(== music.x null)');
    expect(parsed('ID.User == 1 and Id.GROUP == "g"')).toBe('(and (== id.user 1) (== id.group "g"))');
  });

  it('treats a bare field as "field is set" and an empty selection as true', () => {
    expect(parsed('music.title')).toBe('(!= music.title null)');
    expect(parsed('')).toBe('true');
    expect(parsed('  \t\n ')).toBe('true');
  });
});

describe('parseSelection: literals and paths', () => {
  it('reads integers, floats, hex, signs and subtraction without spaces', () => {
    expect(parsed('music.a == -5')).toBe('(== music.a -5)');
    expect(parsed('music.a == +5')).toBe('(== music.a 5)');
    expect(parsed('music.a == 2.5e3')).toBe('(== music.a 2500)');
    expect(parsed('music.a == -534E-3')).toBe('(== music.a -0.534)');
    expect(parsed('music.a == 0x10')).toBe('(== music.a 16)');
    expect(parsed('music.a == 1 -2')).toBe('(== music.a (- 1 2))');
    expect(parsed('-music.a == 1')).toBe('(== (neg music.a) 1)');
  });

  it('reads double- and single-quoted strings with escapes', () => {
    expect(parsed(String.raw`music.a == "x\"y\\z\n\t\x41"`)).toBe(`(== music.a ${JSON.stringify('x"y\\z\n\tA')})`);
    expect(parsed(String.raw`music.a == 'it\'s'`)).toBe(`(== music.a "it's")`);
    expect(parsed(`music.a == 'say "hi"'`)).toBe(`(== music.a ${JSON.stringify('say "hi"')})`);
  });

  it('reads struct, map and array paths, id parts, now() and functions', () => {
    expect(parsed('music.a.b == 1')).toBe('(== music.a.b 1)');
    expect(parsed('music.m{key} == 1')).toBe('(== music.m{key} 1)');
    expect(parsed('music.m{"a key"}.x == 1')).toBe('(== music.m{a key}.x 1)');
    expect(parsed('music.arr[2] == 1')).toBe('(== music.arr[2] 1)');
    expect(
      parsed('id == "x" and id.scheme == "id" and id.namespace == "n" and id.type == "t" and id.specific == "s"'),
    ).toBe(
      '(and (and (and (and (== id "x") (== id.scheme "id")) (== id.namespace "n")) (== id.type "t")) (== id.specific "s"))',
    );
    expect(parsed('music.t > now() - 7200')).toBe('(> music.t (- now() 7200))');
    expect(parsed('music.t.lowercase() = "a*"')).toBe('(= music.t.lowercase() "a*")');
    expect(parsed('id.user.abs() % 7 == 1')).toBe('(== (% id.user.abs() 7) 1)');
  });

  it('lists the document types a selection names', () => {
    expect(referencedTypes(parseSelection('music and book.year > 3 or not (video.x.y + 1 == 2) and music.z'))).toEqual([
      'music',
      'book',
      'video',
    ]);
    expect(referencedTypes(parseSelection('id.user == 3 and true'))).toEqual([]);
  });

  it('keeps the source text', () => {
    expect(parseSelection(' music ').source).toBe(' music ');
  });
});

describe('parseSelection: syntax errors name the position', () => {
  const cases: [string, number, RegExp][] = [
    ['music.title == "abc', 15, /unterminated string/],
    ["music.title == 'abc", 15, /unterminated string/],
    ['(music.a == 1', 13, /unbalanced parenthesis.*position 0/],
    ['music.a == 1)', 12, /unbalanced parenthesis/],
    ['(music.a == 1 and (b)', 21, /not closed/],
    ['music.a ==', 10, /expected an operand after '=='/],
    ['music.a == 1 and', 16, /expected an operand after 'and'|expected a value or condition/],
    ['music.a > 1 or or b', 15, /expected/],
    ['music.a +', 9, /expected an operand after '\+'/],
    ['not', 3, /expected an operand after 'not'/],
    ['music.a # 1', 8, /unexpected character '#'/],
    ['music.a == 1 ; x', 13, /unexpected character ';'/],
    ['music.a !~ 1', 8, /unexpected character '!'/],
    ['music.a == "\\q"', 12, /invalid escape/],
    ['a b', 2, /expected 'and', 'or' or end of input/],
    ['1 == 2 == 3', 7, /cannot be chained/],
    ['music == 3', 0, /document type, not a value/],
    ['42', 0, /expected a field, document type/],
    ['music.', 6, /expected a field name/],
    ['id.bogus == 1', 3, /expected one of scheme/],
    ['music.a.frob() == 1', 8, /unknown function 'frob\(\)'/],
    ['music.a == 99999999999999999999', 11, /64-bit/],
    ['music.m{ == 1', 9, /map key/],
    ['music.a[x] == 1', 8, /array index/],
    ['()', 1, /inside '\(\)'/],
    ['$x == 1', 0, /variables/],
  ];
  for (const [text, position, message] of cases) {
    it(`${JSON.stringify(text)} fails at ${position}`, () => {
      const err = syntaxErrorOf(text);
      expect(err.place?.position).toBe(position);
      expect(err.message).toMatch(message);
      expect(err.message).toContain(`position ${position}`);
    });
  }

  it('refuses nesting deep enough to threaten the stack, with a syntax error', () => {
    const err = syntaxErrorOf('('.repeat(10_000) + 'a' + ')'.repeat(10_000));
    expect(err.message).toMatch(/nested deeper/);
    expect(syntaxErrorOf('not '.repeat(10_000) + 'a').message).toMatch(/nested deeper/);
    expect(syntaxErrorOf('music.a == ' + '-'.repeat(10_000) + '1').message).toMatch(/nested deeper/);
  });

  it('still parses long flat expressions', () => {
    const text = Array.from({ length: 2000 }, (_, i) => `music.f${i} == ${i}`).join(' or ');
    expect(referencedTypes(parseSelection(text))).toEqual(['music']);
  });
});

describe('parseSelection: never crashes on arbitrary input', () => {
  const fragments = [
    'music',
    '.',
    'year',
    ' ',
    '(',
    ')',
    '==',
    '=',
    '=~',
    '!=',
    '<',
    '>=',
    'and',
    'or',
    'not',
    'AND',
    'NoT',
    '"',
    "'",
    '\\',
    '"a*"',
    '1',
    '-',
    '+',
    '*',
    '/',
    '%',
    '2.5',
    'e5',
    'id',
    'id.user',
    'null',
    'true',
    'now()',
    'now',
    '{',
    '}',
    '[',
    ']',
    '$',
    '0x',
    'x',
    '\n',
    '#',
    '\u00e9',
    '\u{1F600}',
    ',',
  ];
  const check = (text: string): void => {
    try {
      parseSelection(text);
    } catch (err) {
      if (!isVespaBulkError(err, 'VB_SELECTION_SYNTAX')) throw err;
      expect(typeof err.place?.position).toBe('number');
      expect(err.place!.position).toBeGreaterThanOrEqual(0);
      expect(err.place!.position).toBeLessThanOrEqual(text.length);
      expect(err.message).toContain(`position ${err.place!.position}`);
    }
  };

  it('random strings either parse or throw VB_SELECTION_SYNTAX with a position', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), check), { numRuns: 3000 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 100 }), check), { numRuns: 1000 });
  });

  it('random sequences of language fragments either parse or throw VB_SELECTION_SYNTAX with a position', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), (parts) => check(parts.join(''))),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...fragments), { maxLength: 40 }), (parts) => check(parts.join(' '))),
      { numRuns: 3000 },
    );
  });
});
