import type {
  ArithmeticOperator,
  BoolNode,
  ComparisonOperator,
  FunctionName,
  IdPart,
  PathStep,
  ValueNode,
} from './ast.js';
import { describeToken, syntaxError, tokenize, type Token } from './lexer.js';

/**
 * Recursive-descent parser for Vespa's document selection language.
 *
 * Boolean and arithmetic expressions share parentheses (`(music.a + 1) > 2` and `(music.a > 2) and b`),
 * so the parser climbs one precedence ladder for both and checks the kind of each operand where it is used:
 *   or < and < not < comparison < + - < * / < % < unary minus < `.function()` < primary.
 * Modulo binding tighter than multiplication is Vespa's rule, kept for compatibility.
 */

/** Nesting beyond this is refused, so hostile input cannot exhaust the stack. */
const maxNestingDepth = 200;

type Parsed =
  | { kind: 'bool'; node: BoolNode }
  | { kind: 'value'; node: ValueNode }
  // `true`/`false` are conditions, but compare as 1/0 against a bool field (`music.flag == true`).
  | { kind: 'boolConstant'; value: boolean; position: number };

/** Keywords Vespa's grammar also accepts as a field name after '.' (all but `not`). */
const nameKeywords: ReadonlySet<string> = new Set(['id', 'user', 'group', 'null', 'true', 'false', 'and', 'or']);

const idParts: ReadonlySet<string> = new Set<IdPart>(['scheme', 'namespace', 'type', 'specific', 'user', 'group']);
const functionNames: ReadonlySet<string> = new Set<FunctionName>(['lowercase', 'abs']);

export function parse(input: string): BoolNode {
  return new Parser(tokenize(input)).parseEntry();
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  private get token(): Token {
    return this.tokens[this.index];
  }

  private peek(offset = 1): Token {
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)];
  }

  /** The current token, re-read (TypeScript would otherwise keep a narrowing across next()). */
  private current(): Token {
    return this.tokens[this.index];
  }

  private next(): Token {
    const t = this.tokens[this.index];
    if (t.kind !== 'end') this.index++;
    return t;
  }

  private isKeyword(word: string): boolean {
    return this.token.kind === 'keyword' && this.token.text === word;
  }

  private enter(position: number): void {
    if (++this.depth > maxNestingDepth)
      throw syntaxError(position, `expression nested deeper than ${maxNestingDepth} levels`);
  }

  parseEntry(): BoolNode {
    // An empty selection selects everything, as in Vespa.
    if (this.token.kind === 'end') return { kind: 'constant', value: true, position: 0 };
    const node = this.asBool(this.parseOr());
    const t = this.current();
    if (t.kind !== 'end') {
      if (t.kind === 'rparen') throw syntaxError(t.position, "unbalanced parenthesis: ')' without a matching '('");
      throw syntaxError(t.position, `expected 'and', 'or' or end of input, found ${describeToken(t)}`);
    }
    return node;
  }

  private parseOr(): Parsed {
    let left = this.parseAnd();
    while (this.isKeyword('or')) {
      const op = this.next();
      const right = this.parseAnd();
      left = {
        kind: 'bool',
        node: { kind: 'or', left: this.asBool(left), right: this.asBool(right), position: op.position },
      };
    }
    return left;
  }

  private parseAnd(): Parsed {
    let left = this.parseNot();
    while (this.isKeyword('and')) {
      const op = this.next();
      const right = this.parseNot();
      left = {
        kind: 'bool',
        node: { kind: 'and', left: this.asBool(left), right: this.asBool(right), position: op.position },
      };
    }
    return left;
  }

  private parseNot(): Parsed {
    if (!this.isKeyword('not')) return this.parseComparison();
    const op = this.next();
    this.enter(op.position);
    this.expectOperand(op);
    const operand = this.asBool(this.parseNot());
    this.depth--;
    return { kind: 'bool', node: { kind: 'not', operand, position: op.position } };
  }

  private parseComparison(): Parsed {
    const left = this.parseAdditive();
    if (this.token.kind !== 'op') return left;
    const op = this.next();
    this.expectOperand(op);
    const right = this.parseAdditive();
    if (this.token.kind === 'op') {
      throw syntaxError(
        this.token.position,
        `comparisons cannot be chained: found '${this.token.text}' after a comparison (use 'and')`,
      );
    }
    return {
      kind: 'bool',
      node: {
        kind: 'compare',
        op: op.text as ComparisonOperator,
        left: this.asValue(left, op),
        right: this.asValue(right, op),
        position: op.position,
      },
    };
  }

  private parseAdditive(): Parsed {
    let left = this.parseMultiplicative();
    while (this.token.kind === 'arith' && (this.token.text === '+' || this.token.text === '-')) {
      left = this.binary(left, this.next(), () => this.parseMultiplicative());
    }
    return left;
  }

  private parseMultiplicative(): Parsed {
    let left = this.parseModulo();
    while (this.token.kind === 'arith' && (this.token.text === '*' || this.token.text === '/')) {
      left = this.binary(left, this.next(), () => this.parseModulo());
    }
    return left;
  }

  private parseModulo(): Parsed {
    let left = this.parseUnary();
    while (this.token.kind === 'arith' && this.token.text === '%') {
      left = this.binary(left, this.next(), () => this.parseUnary());
    }
    return left;
  }

  private binary(left: Parsed, op: Token, parseRight: () => Parsed): Parsed {
    this.expectOperand(op);
    const right = parseRight();
    return {
      kind: 'value',
      node: {
        kind: 'arith',
        op: op.text as ArithmeticOperator,
        left: this.asValue(left, op),
        right: this.asValue(right, op),
        position: op.position,
      },
    };
  }

  private parseUnary(): Parsed {
    if (this.token.kind !== 'arith' || (this.token.text !== '-' && this.token.text !== '+')) return this.parsePostfix();
    const op = this.next();
    this.enter(op.position);
    this.expectOperand(op);
    const operand = this.asValue(this.parseUnary(), op);
    this.depth--;
    if (op.text === '+') return { kind: 'value', node: operand };
    if (operand.kind === 'number')
      return { kind: 'value', node: { ...operand, value: -operand.value, position: op.position } };
    return { kind: 'value', node: { kind: 'negate', operand, position: op.position } };
  }

  private parsePostfix(): Parsed {
    let result = this.parsePrimary();
    while (this.token.kind === 'dot' && result.kind === 'value') {
      const dot = this.next();
      const name = this.token;
      if (name.kind !== 'ident' || this.peek().kind !== 'lparen') {
        throw syntaxError(
          name.position,
          `expected a function call like '.lowercase()' after '.', found ${describeToken(name)}`,
        );
      }
      result = { kind: 'value', node: this.parseCall(result.node, dot.position) };
    }
    return result;
  }

  /** At `name (`: the function applied to `operand`. */
  private parseCall(operand: ValueNode, position: number): ValueNode {
    const name = this.next();
    this.next(); // '('
    if (this.token.kind !== 'rparen') {
      throw syntaxError(
        this.token.position,
        `expected ')' after '${name.text}(' (functions take no arguments), found ${describeToken(this.token)}`,
      );
    }
    this.next();
    const fn = name.text;
    if (fn === 'hash') throw syntaxError(name.position, "function 'hash()' is not supported by vespa-bulk");
    if (!functionNames.has(fn)) {
      throw syntaxError(name.position, `unknown function '${fn}()' (known: lowercase(), abs())`);
    }
    return { kind: 'call', name: fn as FunctionName, operand, position };
  }

  private parsePrimary(): Parsed {
    const t = this.token;
    switch (t.kind) {
      case 'int':
      case 'float':
        this.next();
        return {
          kind: 'value',
          node: { kind: 'number', value: t.value as number, float: t.kind === 'float', position: t.position },
        };
      case 'string':
        this.next();
        return { kind: 'value', node: { kind: 'string', value: t.value as string, position: t.position } };
      case 'now':
        this.next();
        return { kind: 'value', node: { kind: 'now', position: t.position } };
      case 'keyword':
        switch (t.text) {
          case 'null':
            this.next();
            return { kind: 'value', node: { kind: 'null', position: t.position } };
          case 'true':
          case 'false':
            this.next();
            return { kind: 'boolConstant', value: t.text === 'true', position: t.position };
          case 'id':
            return { kind: 'value', node: this.parseId() };
          case 'user':
          case 'group':
            // Vespa's grammar takes these id-part words as identifiers wherever a name is expected, so a
            // document type may be called `user` or `group`.
            return this.parseIdentifier();
          default:
            throw syntaxError(t.position, `expected a value or condition, found ${describeToken(t)}`);
        }
      case 'ident':
        return this.parseIdentifier();
      case 'lparen': {
        this.next();
        this.enter(t.position);
        if (this.token.kind === 'rparen')
          throw syntaxError(this.token.position, "expected an expression inside '()', found ')'");
        const inner = this.parseOr();
        const close = this.current();
        if (close.kind !== 'rparen') {
          if (close.kind === 'end') {
            throw syntaxError(
              close.position,
              `unbalanced parenthesis: '(' at position ${t.position} is not closed before end of input`,
            );
          }
          throw syntaxError(
            close.position,
            `expected ')' to close '(' at position ${t.position}, found ${describeToken(close)}`,
          );
        }
        this.next();
        this.depth--;
        return inner;
      }
      case 'dollar':
        throw syntaxError(t.position, 'variables ($name) are not supported by vespa-bulk');
      case 'rparen':
        throw syntaxError(t.position, "unbalanced parenthesis: found ')' where a value or condition was expected");
      default:
        throw syntaxError(t.position, `expected a value or condition, found ${describeToken(t)}`);
    }
  }

  /** `id` or `id.<part>` (part case-insensitive). */
  private parseId(): ValueNode {
    const idToken = this.next();
    if (this.token.kind !== 'dot') return { kind: 'id', part: undefined, position: idToken.position };
    const after = this.peek();
    // `id.lowercase()` is a function on the whole id: leave the dot to parsePostfix.
    if (after.kind === 'ident' && this.peek(2).kind === 'lparen')
      return { kind: 'id', part: undefined, position: idToken.position };
    this.next(); // '.'
    const part = this.token;
    const name = part.text.toLowerCase();
    if ((part.kind === 'ident' || part.kind === 'keyword') && idParts.has(name)) {
      this.next();
      return { kind: 'id', part: name as IdPart, position: idToken.position };
    }
    if (part.kind === 'ident' && (name === 'bucket' || name === 'gid')) {
      throw syntaxError(part.position, `'id.${name}' is not supported by vespa-bulk`);
    }
    throw syntaxError(
      part.position,
      `expected one of scheme, namespace, type, specific, user, group after 'id.', found ${describeToken(part)}`,
    );
  }

  /** A bare document type (`music`) or a field specification (`music.a.b{key}[2]`, optionally `.function()`). */
  private parseIdentifier(): Parsed {
    const typeToken = this.next();
    const type = typeToken.kind === 'keyword' ? String(typeToken.value) : typeToken.text;
    if (this.token.kind === 'lparen') {
      if (type === 'now') throw syntaxError(typeToken.position, "write 'now()' without spaces between 'now' and '()'");
      const hint = type.toLowerCase() === 'now' ? " (did you mean 'now()'? function names are case-sensitive)" : '';
      throw syntaxError(typeToken.position, `unknown function '${type}()'${hint}`);
    }
    if (this.token.kind !== 'dot')
      return { kind: 'bool', node: { kind: 'doctype', type, position: typeToken.position } };
    this.next(); // '.'
    const fieldToken = this.token;
    if (fieldToken.kind !== 'ident' && !(fieldToken.kind === 'keyword' && nameKeywords.has(fieldToken.text))) {
      throw syntaxError(
        fieldToken.position,
        `expected a field name after '${type}.', found ${describeToken(fieldToken)}`,
      );
    }
    const fieldName = fieldToken.kind === 'keyword' ? String(fieldToken.value) : fieldToken.text;
    if (this.peek().kind === 'lparen') {
      throw syntaxError(
        fieldToken.position,
        `document type functions like '${type}.${fieldToken.text}()' are not supported by vespa-bulk`,
      );
    }
    this.next();
    const path: PathStep[] = [];
    this.parseLookups(path);
    let node: ValueNode = { kind: 'field', type, field: fieldName, path, position: typeToken.position };
    while (this.token.kind === 'dot') {
      const dot = this.token;
      const name = this.peek();
      if (name.kind !== 'ident') {
        throw syntaxError(name.position, `expected a field name or function after '.', found ${describeToken(name)}`);
      }
      if (this.peek(2).kind === 'lparen') {
        this.next(); // '.'
        node = this.parseCall(node, dot.position);
        break; // further calls are handled by parsePostfix
      }
      this.next();
      this.next();
      path.push({ kind: 'field', name: name.text });
      this.parseLookups(path);
    }
    return { kind: 'value', node };
  }

  private parseLookups(path: PathStep[]): void {
    for (;;) {
      const t = this.token;
      if (t.kind !== 'mapLookup' && t.kind !== 'arrayLookup') return;
      const key = t.value as string;
      if (key.startsWith('$') && t.text.indexOf('"') < 0) {
        throw syntaxError(t.position, 'variables ($name) in field paths are not supported by vespa-bulk');
      }
      this.next();
      path.push(t.kind === 'mapLookup' ? { kind: 'key', key } : { kind: 'index', index: Number(key) });
    }
  }

  /** After an operator: fail with a clear message when nothing follows it. */
  private expectOperand(op: Token): void {
    const t = this.token;
    if (t.kind === 'end') throw syntaxError(t.position, `expected an operand after '${op.text}', found end of input`);
    if (t.kind === 'rparen') throw syntaxError(t.position, `expected an operand after '${op.text}', found ')'`);
    if (t.kind === 'keyword' && (t.text === 'and' || t.text === 'or')) {
      throw syntaxError(t.position, `expected an operand after '${op.text}', found keyword '${t.text}'`);
    }
    if (t.kind === 'op') throw syntaxError(t.position, `expected an operand after '${op.text}', found '${t.text}'`);
  }

  private asBool(p: Parsed): BoolNode {
    switch (p.kind) {
      case 'bool':
        return p.node;
      case 'boolConstant':
        return { kind: 'constant', value: p.value, position: p.position };
      case 'value':
        // A bare field means "the field is set", as in Vespa (`music.title` is `music.title != null`).
        if (p.node.kind === 'field') {
          return {
            kind: 'compare',
            op: '!=',
            left: p.node,
            right: { kind: 'null', position: p.node.position },
            position: p.node.position,
          };
        }
        throw syntaxError(
          p.node.position,
          'expected a field, document type, true/false or a comparison, found a value that is not a condition',
        );
    }
  }

  private asValue(p: Parsed, op: Token): ValueNode {
    switch (p.kind) {
      case 'value':
        return p.node;
      case 'boolConstant':
        // Vespa stores bool fields as integers 0/1.
        return { kind: 'number', value: p.value ? 1 : 0, float: false, position: p.position };
      case 'bool':
        if (p.node.kind === 'doctype') {
          throw syntaxError(
            p.node.position,
            `'${p.node.type}' is a document type, not a value; use '${p.node.type}.<field>' as operand of '${op.text}'`,
          );
        }
        throw syntaxError(p.node.position, `expected a value as operand of '${op.text}', found a condition`);
    }
  }
}
