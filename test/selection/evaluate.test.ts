import { describe, expect, it } from 'vitest';
import {
  compileSelection,
  evaluateSelection,
  parseSelection,
  type SelectionDocument,
} from '../../src/selection/index.js';

const music: SelectionDocument = {
  id: 'id:mynamespace:music:n=1234:song/one:a',
  type: 'music',
  fields: {
    title: 'Abba Gold',
    artist: 'ABBA',
    year: 1992,
    rating: 4.5,
    tags: ['pop', 'swedish'],
    scores: [3, 7, 11],
    explicit: false,
    empty: [],
    nothing: null,
    info: { label: 'Polydor', address: { city: 'Stockholm' } },
    counts: { plays: 1000, skips: 12 },
    tracks: [
      { name: 'Dancing Queen', length: 231 },
      { name: 'SOS', length: 203 },
    ],
    constructorField: 'x',
  },
};
const book: SelectionDocument = {
  id: 'id:books:book:g=shelf-7:moby',
  type: 'book',
  fields: { title: 'Moby Dick', year: 1851 },
};
const plain: SelectionDocument = { id: 'id:ns:music::plain-id', type: 'music', fields: { title: 'Plain' } };

const matches = (selection: string, doc: SelectionDocument = music, nowSeconds?: number): boolean => {
  const compiled = compileSelection(selection)(doc, nowSeconds === undefined ? undefined : { nowSeconds });
  // evaluateSelection and compileSelection share one compiler; they must agree.
  expect(evaluateSelection(parseSelection(selection), doc, nowSeconds === undefined ? undefined : { nowSeconds })).toBe(
    compiled,
  );
  return compiled;
};

describe('comparison operators', () => {
  it('compares numbers with == != < <= > >=, ints and floats alike', () => {
    expect(matches('music.year == 1992')).toBe(true);
    expect(matches('music.year == 1992.0')).toBe(true);
    expect(matches('music.year != 1992')).toBe(false);
    expect(matches('music.year != 1993')).toBe(true);
    expect(matches('music.year < 1993')).toBe(true);
    expect(matches('music.year < 1992')).toBe(false);
    expect(matches('music.year <= 1992')).toBe(true);
    expect(matches('music.year > 1991.5')).toBe(true);
    expect(matches('music.year > 1992')).toBe(false);
    expect(matches('music.year >= 1992')).toBe(true);
    expect(matches('music.rating > 4')).toBe(true);
    expect(matches('1992 == music.year')).toBe(true);
    expect(matches('2000 > music.year')).toBe(true);
  });

  it('compares strings exactly and orders them', () => {
    expect(matches('music.artist == "ABBA"')).toBe(true);
    expect(matches("music.artist == 'ABBA'")).toBe(true);
    expect(matches('music.artist == "abba"')).toBe(false);
    expect(matches('music.artist != "abba"')).toBe(true);
    expect(matches('music.artist < "ABBB"')).toBe(true);
    expect(matches('music.artist >= "ABBA"')).toBe(true);
    expect(matches('music.artist > "ABBA"')).toBe(false);
  });

  it('never coerces between strings and numbers (the comparison is invalid, so not even its negation matches)', () => {
    expect(matches('music.year == "1992"')).toBe(false);
    expect(matches('music.year != "1992"')).toBe(false);
    expect(matches('not music.year == "1992"')).toBe(false);
    expect(matches('music.title > 5')).toBe(false);
    expect(matches('not music.title > 5')).toBe(false);
  });

  it('glob = matches the whole string with * and ?', () => {
    expect(matches('music.title = "Abba*"')).toBe(true);
    expect(matches('music.title = "*Gold"')).toBe(true);
    expect(matches('music.title = "*ba G*"')).toBe(true);
    expect(matches('music.title = "Abba"')).toBe(false);
    expect(matches('music.title = "Gold"')).toBe(false);
    expect(matches('music.title = "Abba Gold"')).toBe(true);
    expect(matches('music.title = "A?ba Go?d"')).toBe(true);
    expect(matches('music.title = "A?a*"')).toBe(false);
    expect(matches('music.title = "A*b*d"')).toBe(true);
    expect(matches('music.title = "*"')).toBe(true);
    expect(matches('music.title = "a*"')).toBe(false);
  });

  it('glob treats regex characters literally and lets * cross newlines', () => {
    const doc = { id: 'id:a:t::1', type: 't', fields: { s: 'a.b(c)[d]+$^|{e}\\f', m: 'line1\nline2' } };
    expect(matches(String.raw`t.s = "a.b(c)[d]+$^|{e}\\f"`, doc)).toBe(true);
    expect(matches('t.s = "a?b*"', doc)).toBe(true);
    expect(matches('t.s = "aXb*"', doc)).toBe(false);
    expect(matches('t.m = "line1*2"', doc)).toBe(true);
    expect(matches(String.raw`t.m = "line1\nline2"`, doc)).toBe(true);
  });

  it('glob with a non-string right side behaves as ==', () => {
    expect(matches('music.year = 1992')).toBe(true);
    expect(matches('music.year = 1993')).toBe(false);
    expect(matches('music.nope = null')).toBe(true);
  });

  it('regex =~ searches anywhere unless anchored', () => {
    expect(matches('music.title =~ "bba"')).toBe(true);
    expect(matches('music.title =~ "^Abba"')).toBe(true);
    expect(matches('music.title =~ "^bba"')).toBe(false);
    expect(matches('music.title =~ "Gold$"')).toBe(true);
    expect(matches('music.title =~ "^A.*d$"')).toBe(true);
    expect(matches('music.title =~ "G[aeiou]ld"')).toBe(true);
    expect(matches('music.title =~ ""')).toBe(true);
    expect(matches('music.year =~ "19"')).toBe(false);
    // A pattern that does not compile matches nothing, rather than failing the visit.
    expect(matches('music.title =~ "(unclosed"')).toBe(false);
  });

  it('compares two fields and a pattern held in a field', () => {
    const doc = { id: 'id:a:t::1', type: 't', fields: { a: 3, b: 3, c: 4, s: 'hello', p: 'h*o', r: '^he' } };
    expect(matches('t.a == t.b', doc)).toBe(true);
    expect(matches('t.a < t.c', doc)).toBe(true);
    expect(matches('t.s = t.p', doc)).toBe(true);
    expect(matches('t.s =~ t.r', doc)).toBe(true);
  });
});

describe('logic', () => {
  it('and, or, not with precedence not > and > or', () => {
    expect(matches('true or false and false')).toBe(true); // true or (false and false)
    expect(matches('(true or false) and false')).toBe(false);
    expect(matches('not false and false')).toBe(false); // (not false) and false
    expect(matches('not (false and false)')).toBe(true);
    expect(matches('music and music.year == 1992')).toBe(true);
    expect(matches('book or music.year == 1')).toBe(false);
    expect(matches('NOT book AND MUSIC.year == 1992'.replace('MUSIC', 'music'))).toBe(true);
  });

  it('short-circuits: the other side of a decided and/or does not matter', () => {
    expect(matches('false and music.nope > 1')).toBe(false);
    expect(matches('true or music.nope > 1')).toBe(true);
    expect(matches('music.nope > 1 or true')).toBe(true);
    expect(matches('not (music.nope > 1 and false)')).toBe(true);
  });

  it('propagates invalid as Vespa does: and/or stay invalid unless decided, not keeps it invalid', () => {
    expect(matches('music.nope > 1 and true')).toBe(false);
    expect(matches('not (music.nope > 1 and true)')).toBe(false);
    expect(matches('music.nope > 1 or false')).toBe(false);
    expect(matches('not (music.nope > 1 or false)')).toBe(false);
    expect(matches('not not music.nope > 1')).toBe(false);
  });
});

describe('document types', () => {
  it('a bare type name selects documents of that type', () => {
    expect(matches('music')).toBe(true);
    expect(matches('book')).toBe(false);
    expect(matches('book', book)).toBe(true);
    expect(matches('not book')).toBe(true);
  });

  it('a field of another type is invalid: neither it nor its negation matches', () => {
    expect(matches('book.year == 1992')).toBe(false);
    expect(matches('not book.year == 1992')).toBe(false);
    expect(matches('book.year == null')).toBe(false);
    expect(matches('music.year < 1900 or book.year < 1900', book)).toBe(true);
    expect(matches('music.year < 1900 or book.year < 1900')).toBe(false);
  });
});

describe('missing fields and null', () => {
  it('a missing field equals null and nothing else', () => {
    expect(matches('music.nope == null')).toBe(true);
    expect(matches('music.nope != null')).toBe(false);
    expect(matches('music.title == null')).toBe(false);
    expect(matches('music.title != null')).toBe(true);
    expect(matches('null == music.nope')).toBe(true);
    expect(matches('music.nope == 5')).toBe(false);
    expect(matches('music.nope != 5')).toBe(true);
    expect(matches('not music.nope == 5')).toBe(true);
  });

  it('ordering or matching a missing field is invalid, so its negation does not match either', () => {
    for (const op of ['<', '<=', '>', '>=', '=~']) {
      expect(matches(`music.nope ${op} "5"`)).toBe(false);
      expect(matches(`not music.nope ${op} "5"`)).toBe(false);
    }
    expect(matches('music.nope = "a*"')).toBe(false);
    expect(matches('not music.nope = "a*"')).toBe(false);
  });

  it('a bare field tests presence; JSON null and empty collections count as missing', () => {
    expect(matches('music.title')).toBe(true);
    expect(matches('music.nope')).toBe(false);
    expect(matches('not music.nope')).toBe(true);
    expect(matches('music.nothing')).toBe(false);
    expect(matches('music.empty')).toBe(false);
    expect(matches('music.empty == null')).toBe(true);
  });

  it('does not mistake Object.prototype members for fields', () => {
    expect(matches('music.constructor')).toBe(false);
    expect(matches('music.toString == null')).toBe(true);
    expect(matches('music.info.hasOwnProperty')).toBe(false);
    expect(matches('music.constructorField == "x"')).toBe(true);
  });
});

describe('collections and paths', () => {
  it('an array matches if any element matches', () => {
    expect(matches('music.tags == "pop"')).toBe(true);
    expect(matches('music.tags == "swedish"')).toBe(true);
    expect(matches('music.tags == "rock"')).toBe(false);
    expect(matches('music.tags = "swe*"')).toBe(true);
    expect(matches('music.tags =~ "^sw"')).toBe(true);
    expect(matches('music.scores > 10')).toBe(true);
    expect(matches('music.scores > 11')).toBe(false);
    expect(matches('music.scores != 3')).toBe(true);
    expect(matches('music.tags == null')).toBe(false);
    expect(matches('music.tags != null')).toBe(true);
  });

  it('reads array elements by index, struct members and map values by key', () => {
    expect(matches('music.tags[1] == "swedish"')).toBe(true);
    expect(matches('music.tags[0] == "swedish"')).toBe(false);
    expect(matches('music.tags[5] == null')).toBe(true);
    expect(matches('music.info.label == "Polydor"')).toBe(true);
    expect(matches('music.info.address.city = "Stock*"')).toBe(true);
    expect(matches('music.info.missing == null')).toBe(true);
    expect(matches('music.counts{plays} > 999')).toBe(true);
    expect(matches('music.counts{"skips"} == 12')).toBe(true);
    expect(matches('music.counts{other} == null')).toBe(true);
    expect(matches('music.tracks[1].name == "SOS"')).toBe(true);
  });

  it('a struct member of an array of structs matches if any element does', () => {
    expect(matches('music.tracks.name == "SOS"')).toBe(true);
    expect(matches('music.tracks.length < 210')).toBe(true);
    expect(matches('music.tracks.length < 200')).toBe(false);
  });

  it('a map or weighted set compared directly matches on its keys', () => {
    expect(matches('music.counts == "plays"')).toBe(true);
    expect(matches('music.counts == "nope"')).toBe(false);
  });

  it('booleans are 1 and 0', () => {
    expect(matches('music.explicit == false')).toBe(true);
    expect(matches('music.explicit == 0')).toBe(true);
    expect(matches('music.explicit == true')).toBe(false);
    expect(matches('music.explicit')).toBe(true); // present, although false
  });
});

describe('document id', () => {
  it('exposes the parts of an n= id', () => {
    expect(matches('id == "id:mynamespace:music:n=1234:song/one:a"')).toBe(true);
    expect(matches('id = "id:mynamespace:*"')).toBe(true);
    expect(matches('id.scheme == "id"')).toBe(true);
    expect(matches('id.namespace == "mynamespace"')).toBe(true);
    expect(matches('id.type == "music"')).toBe(true);
    expect(matches('id.specific == "song/one:a"')).toBe(true);
    expect(matches('id.user == 1234')).toBe(true);
    expect(matches('id.user > 1000 and id.user < 2000')).toBe(true);
    expect(matches('id.user % 1000 == 234')).toBe(true);
    expect(matches('id.group == "x"')).toBe(false);
    expect(matches('not id.group == "x"')).toBe(false); // no group: invalid
  });

  it('exposes the group of a g= id', () => {
    expect(matches('id.group == "shelf-7"', book)).toBe(true);
    expect(matches('id.group = "shelf-*"', book)).toBe(true);
    expect(matches('id.specific == "moby"', book)).toBe(true);
    expect(matches('id.user == 7', book)).toBe(false);
    expect(matches('not id.user == 7', book)).toBe(false);
  });

  it('a plain id has neither user nor group', () => {
    expect(matches('id.specific == "plain-id"', plain)).toBe(true);
    expect(matches('id.namespace == "ns"', plain)).toBe(true);
    expect(matches('id.user == 1', plain)).toBe(false);
    expect(matches('id.group == "g"', plain)).toBe(false);
    expect(matches('id.user == 1 or id.specific = "plain*"', plain)).toBe(true);
  });
});

describe('arithmetic, functions and now()', () => {
  it('computes with + - * / % and usual precedence', () => {
    expect(matches('music.year + 8 == 2000')).toBe(true);
    expect(matches('music.year - 1992 == 0')).toBe(true);
    expect(matches('music.year * 2 == 3984')).toBe(true);
    expect(matches('music.year / 2 == 996')).toBe(true);
    expect(matches('music.year % 10 == 2')).toBe(true);
    expect(matches('1 + 2 * 3 == 7')).toBe(true);
    expect(matches('(1 + 2) * 3 == 9')).toBe(true);
    expect(matches('10 - 4 - 3 == 3')).toBe(true);
    expect(matches('-music.year == -1992')).toBe(true);
    expect(matches('music.year - -8 == 2000')).toBe(true);
  });

  it('divides integers as integers and floats as floats', () => {
    expect(matches('7 / 2 == 3')).toBe(true);
    expect(matches('-7 / 2 == -3')).toBe(true);
    expect(matches('7.0 / 2 == 3.5')).toBe(true);
    expect(matches('music.rating * 2 == 9')).toBe(true);
    expect(matches('music.rating / 2 == 2.25')).toBe(true);
  });

  it('makes division by zero, float modulo and arithmetic on non-numbers invalid', () => {
    expect(matches('music.year / 0 == 1')).toBe(false);
    expect(matches('not music.year / 0 == 1')).toBe(false);
    expect(matches('music.year % 0 == 1')).toBe(false);
    expect(matches('music.rating % 2 == 0.5')).toBe(false);
    expect(matches('not music.title + 1 == 1')).toBe(false);
    expect(matches('not music.nope + 1 == 1')).toBe(false);
  });

  it('concatenates strings with +', () => {
    expect(matches('music.artist + " - " + music.title == "ABBA - Abba Gold"')).toBe(true);
  });

  it('lowercase() and abs()', () => {
    expect(matches('music.artist.lowercase() == "abba"')).toBe(true);
    expect(matches('(music.artist + "X").lowercase() == "abbax"')).toBe(true);
    expect(matches('(0 - music.year).abs() == 1992')).toBe(true);
    expect(matches('music.year.lowercase() == "1992"')).toBe(false);
  });

  it('now() is the context time in seconds, or the clock', () => {
    expect(matches('now() == 1700000000', music, 1_700_000_000)).toBe(true);
    expect(matches('music.year > now() - 100', music, 2000)).toBe(true);
    expect(matches('music.year > now() - 5', music, 2000)).toBe(false);
    const clock = Math.floor(Date.now() / 1000);
    expect(matches(`now() >= ${clock} and now() < ${clock + 3600}`)).toBe(true);
  });
});

describe('compileSelection', () => {
  it('evaluates one compiled selection against many documents', () => {
    const select = compileSelection('music.year > 1900 and music.title = "a*"');
    const docs = Array.from({ length: 100 }, (_, i) => ({
      id: `id:ns:music::${i}`,
      type: i % 10 === 0 ? 'book' : 'music',
      fields: { year: 1850 + i, title: i % 2 === 0 ? 'abc' : 'xyz' },
    }));
    const selected = docs.filter((d) => select(d)).map((d) => Number(d.id.split(':').pop()));
    expect(selected).toEqual(docs.map((_, i) => i).filter((i) => i % 10 !== 0 && 1850 + i > 1900 && i % 2 === 0));
  });

  it("reads each document's own id when evaluating many", () => {
    const select = compileSelection('id.user >= 10 and id.user < 13 or id.group == "g5"');
    const ids = [
      'id:a:t:n=9:x',
      'id:a:t:n=10:x',
      'id:a:t:n=12:x',
      'id:a:t:n=13:x',
      'id:a:t:g=g5:x',
      'id:a:t::x',
      'id:a:t:n=11:x',
    ];
    expect(ids.filter((id) => select({ id, type: 't', fields: {} }))).toEqual([
      'id:a:t:n=10:x',
      'id:a:t:n=12:x',
      'id:a:t:g=g5:x',
      'id:a:t:n=11:x',
    ]);
  });

  it('keeps glob and regex patterns taken from fields apart', () => {
    const doc = { id: 'id:a:t::1', type: 't', fields: { s: '~abc', glob: '~abc', re: 'abc' } };
    expect(matches('t.s = t.glob', doc)).toBe(true);
    expect(matches('t.s =~ t.re', doc)).toBe(true);
    expect(matches('t.re = t.glob', doc)).toBe(false);
  });

  it('throws the parse error at compile time', () => {
    expect(() => compileSelection('music.year >')).toThrow(/position 12/);
  });
});

describe('document types named like id keywords', () => {
  // Vespa's grammar reads `user` and `group` (id parts) as identifiers where a name is expected.
  const userDoc: SelectionDocument = { id: 'id:ns:user::1', type: 'user', fields: { name: 'ann', group: 'eu' } };
  it('takes `user` and `group` as document type names, and keywords as field names', () => {
    expect(evaluateSelection(parseSelection('user'), userDoc)).toBe(true);
    expect(evaluateSelection(parseSelection('user and user.name == "ann"'), userDoc)).toBe(true);
    expect(evaluateSelection(parseSelection('group'), userDoc)).toBe(false);
    expect(evaluateSelection(parseSelection('user.group == "eu"'), userDoc)).toBe(true);
    expect(evaluateSelection(parseSelection('id.user == 1 or user'), userDoc)).toBe(true);
  });
  it('still refuses `not` as a name, as the grammar does', () => {
    expect(() => parseSelection('user.not == 1')).toThrow();
  });
});
