/**
 * Whether a text is a boolean predicate the service's predicate field accepts (`Predicate.fromString`: an ANTLR 3
 * grammar whose first error is thrown as an IllegalArgumentException). Returns the error message the service gives,
 * `line 1:<column> <what>`, or undefined when the text parses. Pure: no I/O.
 *
 * The grammar (Predicate.g): disjunction of conjunctions of leaves or parenthesised (optionally negated)
 * disjunctions; a leaf is `key [not] in [v, ...]`, `key [not] in [from..to]` (with optional partitions), `true`
 * or `false`. Messages follow ANTLR 3's BaseRecognizer: a lexer error names the character, a failed decision is
 * "no viable alternative", a failed match is "extraneous input" (the next token is the one wanted), "missing"
 * (the current token may follow the wanted one) or "mismatched input".
 */

type Kind =
  | 'INTEGER'
  | 'VALUE'
  | 'STRING'
  | 'OR'
  | 'AND'
  | 'NOT'
  | 'IN'
  | 'TRUE'
  | 'FALSE'
  | '('
  | ')'
  | '['
  | ']'
  | ','
  | '..'
  | '='
  | '=-'
  | '+['
  | 'EOF';

interface Token {
  kind: Kind;
  text: string;
  column: number;
}

class PredicateSyntaxError extends Error {}

const keywords: Record<string, Kind> = {
  OR: 'OR',
  or: 'OR',
  AND: 'AND',
  and: 'AND',
  NOT: 'NOT',
  not: 'NOT',
  IN: 'IN',
  in: 'IN',
  TRUE: 'TRUE',
  true: 'TRUE',
  FALSE: 'FALSE',
  false: 'FALSE',
};
const valueKinds = new Set<Kind>(['VALUE', 'STRING', 'INTEGER', 'OR', 'AND', 'NOT', 'IN', 'TRUE', 'FALSE']);

/** The service's message for a predicate text it refuses, or undefined when it parses. */
export function predicateError(text: string): string | undefined {
  try {
    new Parser(text).predicate();
    return undefined;
  } catch (err) {
    if (err instanceof PredicateSyntaxError) return err.message;
    throw err;
  }
}

function charDisplay(c: string | undefined): string {
  if (c === undefined) return "'<EOF>'";
  return `'${c.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

function tokenDisplay(t: Token): string {
  return `'${t.text.replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
}

/** ANTLR's token names: literal tokens in quotes, the rest by rule name. */
function tokenName(kind: Kind): string {
  return /^[A-Z]+$/.test(kind) ? kind : `'${kind}'`;
}

/** The lexer, run token by token as the parser looks ahead (ANTLR 3 fills its token buffer lazily). */
class Lexer {
  private pos = 0;
  constructor(private readonly text: string) {}

  next(): Token {
    const s = this.text;
    while (s[this.pos] === ' ' || s[this.pos] === '\t') this.pos++;
    const start = this.pos;
    const c = s[start];
    const fail = (at: number, what: string): never => {
      throw new PredicateSyntaxError(`line 1:${at} ${what}`);
    };
    if (c === undefined) return { kind: 'EOF', text: '<EOF>', column: start };
    const word = /^[A-Za-z0-9_]+/.exec(s.slice(start))?.[0];
    const integer = /^[-+]?(?:[1-9][0-9]*|0)/.exec(s.slice(start))?.[0];
    if (word !== undefined) {
      this.pos += word.length;
      // The lexer takes the longest match; on equal length the rule written first (INTEGER, then the keywords) wins.
      if (integer !== undefined && integer.length === word.length)
        return { kind: 'INTEGER', text: word, column: start };
      return { kind: keywords[word] ?? 'VALUE', text: word, column: start };
    }
    if (c === '-' || (c === '+' && s[start + 1] !== '[')) {
      if (integer === undefined) fail(start + 1, `no viable alternative at character ${charDisplay(s[start + 1])}`);
      this.pos += integer!.length;
      return { kind: 'INTEGER', text: integer!, column: start };
    }
    if (c === "'" || c === '"') {
      let i = start + 1;
      while (i < s.length && s[i] !== c) i += s[i] === '\\' && s[i + 1] === c ? 2 : 1;
      if (i >= s.length) fail(s.length, `mismatched character '<EOF>' expecting '${c === "'" ? "\\'" : '"'}'`);
      this.pos = i + 1;
      return { kind: 'STRING', text: s.slice(start + 1, i), column: start };
    }
    for (const literal of ['..', '=-', '+[', '(', ')', '[', ']', ',', '='] as const) {
      if (s.startsWith(literal, start)) {
        this.pos += literal.length;
        return { kind: literal, text: literal, column: start };
      }
    }
    if (c === '.') fail(start + 1, `mismatched character ${charDisplay(s[start + 1])} expecting '.'`);
    return fail(start, `no viable alternative at character ${charDisplay(c)}`);
  }
}

class Parser {
  private readonly tokens: Token[] = [];
  private readonly lexer: Lexer;
  private index = 0;
  /** Open parenthesised groups: what may follow a rule's end is `)` inside one, end of input outside. */
  private groups = 0;

  constructor(text: string) {
    this.lexer = new Lexer(text);
  }

  private la(k: number): Token {
    while (this.tokens.length < this.index + k) {
      const last = this.tokens[this.tokens.length - 1];
      this.tokens.push(last?.kind === 'EOF' ? last : this.lexer.next());
    }
    return this.tokens[this.index + k - 1];
  }

  private error(at: Token, what: string): never {
    throw new PredicateSyntaxError(`line 1:${at.column} ${what}`);
  }

  private noViable(at: Token): never {
    return this.error(at, `no viable alternative at input ${tokenDisplay(at)}`);
  }

  /** ANTLR's match with single-token recovery, whose report (thrown) is the message. */
  private match(kind: Kind, follow: Kind[]): Token {
    const t = this.la(1);
    if (t.kind === kind) {
      this.index++;
      return t;
    }
    if (this.la(2).kind === kind)
      this.error(t, `extraneous input ${tokenDisplay(t)} expecting ${kind === 'EOF' ? 'EOF' : tokenName(kind)}`);
    if (follow.includes(t.kind)) this.error(t, `missing ${tokenName(kind)} at ${tokenDisplay(t)}`);
    return this.error(t, `mismatched input ${tokenDisplay(t)} expecting ${kind === 'EOF' ? 'EOF' : tokenName(kind)}`);
  }

  /** What may come after a leaf or a group: the operators, then `)` or the end. */
  private afterUnary(): Kind[] {
    return ['AND', 'OR', this.groups > 0 ? ')' : 'EOF'];
  }

  predicate(): void {
    this.disjunction();
    this.match('EOF', []);
  }

  private disjunction(): void {
    this.conjunction();
    while (this.la(1).kind === 'OR') {
      this.index++;
      this.conjunction();
    }
  }

  private conjunction(): void {
    this.unary();
    while (this.la(1).kind === 'AND') {
      this.index++;
      this.unary();
    }
  }

  private unary(): void {
    const t = this.la(1);
    if (t.kind === '(' || (t.kind === 'NOT' && this.la(2).kind === '(')) {
      if (t.kind === 'NOT') this.index++;
      this.index++;
      this.groups++;
      this.disjunction();
      this.groups--;
      this.match(')', this.afterUnary());
      return;
    }
    if (t.kind === 'NOT' && !['NOT', 'IN'].includes(this.la(2).kind)) this.noViable(this.la(2));
    if (!valueKinds.has(t.kind)) this.noViable(t);
    this.leaf();
  }

  private leaf(): void {
    const t = this.la(1);
    if ((t.kind === 'TRUE' || t.kind === 'FALSE') && !['NOT', 'IN'].includes(this.la(2).kind)) {
      if (![...this.afterUnary(), 'AND', 'OR'].includes(this.la(2).kind)) this.noViable(this.la(2));
      this.index++;
      return;
    }
    this.index++;
    if (this.la(1).kind === 'NOT') this.index++;
    this.match('IN', ['[']);
    if (this.la(1).kind !== '[') this.noViable(this.la(1));
    const second = this.la(2);
    if (second.kind === '..' || (second.kind === 'INTEGER' && this.la(3).kind === '..')) return this.range();
    if (second.kind === 'INTEGER' && this.la(3).kind !== ',' && this.la(3).kind !== ']') this.noViable(this.la(3));
    if (!valueKinds.has(second.kind)) this.noViable(second);
    this.multivalue();
  }

  private multivalue(): void {
    this.index++;
    this.value();
    while (this.la(1).kind === ',') {
      this.index++;
      this.value();
    }
    this.match(']', this.afterUnary());
  }

  private value(): void {
    if (!valueKinds.has(this.la(1).kind)) this.noViable(this.la(1));
    this.index++;
  }

  private range(): void {
    this.index++;
    if (this.la(1).kind === 'INTEGER') this.long(this.la(1));
    this.match('..', ['INTEGER', '(', ']']);
    if (this.la(1).kind === 'INTEGER') this.long(this.la(1));
    if (this.la(1).kind === '(') {
      this.index++;
      this.partition();
      while (this.la(1).kind === ',') {
        this.index++;
        this.partition();
      }
      this.match(')', [']']);
    }
    this.match(']', this.afterUnary());
  }

  /** A range bound goes through Long.parseLong, whose NumberFormatException is the message. */
  private long(t: Token): void {
    this.index++;
    const n = BigInt(t.text);
    if (n < -(2n ** 63n) || n >= 2n ** 63n) throw new PredicateSyntaxError(`For input string: "${t.text}"`);
  }

  private partition(): void {
    this.value();
    const op = this.la(1).kind;
    if (op !== '=' && op !== '=-')
      this.error(this.la(1), `mismatched input ${tokenDisplay(this.la(1))} expecting set null`);
    this.index++;
    this.match('INTEGER', []);
    if (this.la(1).kind === 'INTEGER') {
      this.index++;
      return;
    }
    if (this.la(1).kind !== '+[') this.noViable(this.la(1));
    this.index++;
    if (this.la(1).kind === 'INTEGER') this.index++;
    this.match('..', ['INTEGER', ']']);
    if (this.la(1).kind === 'INTEGER') this.index++;
    this.match(']', [')', ',']);
  }
}
