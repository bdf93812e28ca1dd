import { VespaBulkError } from '../core/errors.js';

/**
 * Tokens of the document selection language, following Vespa's flex lexer: keywords are case-insensitive,
 * `now()` is one case-sensitive token, numbers carry no sign (the parser handles unary minus, so `1 -2`
 * is a subtraction), and field-path lookups `{key}` / `[3]` are single tokens.
 */
export type TokenKind =
  | 'int'
  | 'float'
  | 'string'
  | 'ident'
  | 'keyword'
  | 'now'
  | 'op' // comparison operator
  | 'arith' // + - * / %
  | 'dot'
  | 'lparen'
  | 'rparen'
  | 'mapLookup'
  | 'arrayLookup'
  | 'dollar'
  | 'comma'
  | 'end';

export interface Token {
  kind: TokenKind;
  /** Source text of the token (for keywords: lower-cased). */
  text: string;
  /** Decoded value: number for int/float, unescaped text for strings and lookups. */
  value: number | string;
  /** 0-based offset of the token's first character. */
  position: number;
}

/** Reserved words; Vespa refuses them as document type and field names too. */
export const keywords = new Set(['and', 'or', 'not', 'true', 'false', 'null', 'id', 'user', 'group']);

export function syntaxError(position: number, message: string): VespaBulkError {
  return new VespaBulkError('VB_SELECTION_SYNTAX', `selection syntax error at position ${position}: ${message}`, {
    place: { position },
  });
}

/** How a token is named in error messages. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'end of input';
    case 'string':
      return `string ${JSON.stringify(token.value)}`;
    case 'int':
    case 'float':
      return `number ${token.text}`;
    case 'ident':
      return `identifier '${token.text}'`;
    case 'keyword':
      return `keyword '${token.text}'`;
    default:
      return `'${token.text}'`;
  }
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentPart = (c: number): boolean => isIdentStart(c) || isDigit(c);
const isHexDigit = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
// Vespa's whitespace: space, \t, \n, \f, \r.
const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;

const int64Max = 2n ** 63n - 1n;

export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  const n = input.length;
  let i = 0;
  while (i < n) {
    const c = input.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    const start = i;
    if (isDigit(c)) {
      i = lexNumber(input, i, tokens);
      continue;
    }
    if (isIdentStart(c)) {
      while (i < n && isIdentPart(input.charCodeAt(i))) i++;
      const text = input.slice(start, i);
      if (text === 'now' && input.startsWith('()', i)) {
        i += 2;
        tokens.push({ kind: 'now', text: 'now()', value: 'now()', position: start });
        continue;
      }
      const lower = text.toLowerCase();
      // A keyword's value keeps the text as written: where the grammar takes it as a name (a document type or
      // a field), the name is what the user wrote.
      if (keywords.has(lower)) tokens.push({ kind: 'keyword', text: lower, value: text, position: start });
      else tokens.push({ kind: 'ident', text, value: text, position: start });
      continue;
    }
    switch (c) {
      case 34: // "
      case 39: {
        // '
        const [value, next] = lexString(input, i);
        tokens.push({ kind: 'string', text: input.slice(start, next), value, position: start });
        i = next;
        continue;
      }
      case 123: {
        // {
        const [value, next] = lexMapLookup(input, i);
        tokens.push({ kind: 'mapLookup', text: input.slice(start, next), value, position: start });
        i = next;
        continue;
      }
      case 91: {
        // [
        const [value, next] = lexArrayLookup(input, i);
        tokens.push({ kind: 'arrayLookup', text: input.slice(start, next), value, position: start });
        i = next;
        continue;
      }
      case 61: // =
        if (input.charCodeAt(i + 1) === 61) pushOp(tokens, '==', start);
        else if (input.charCodeAt(i + 1) === 126) pushOp(tokens, '=~', start);
        else pushOp(tokens, '=', start);
        i += tokens[tokens.length - 1].text.length;
        continue;
      case 33: // !
        if (input.charCodeAt(i + 1) === 61) {
          pushOp(tokens, '!=', start);
          i += 2;
          continue;
        }
        throw syntaxError(start, "unexpected character '!' (did you mean '!=' or 'not'?)");
      case 60: // <
      case 62: // >
        if (input.charCodeAt(i + 1) === 61) {
          pushOp(tokens, input[i] + '=', start);
          i += 2;
        } else {
          pushOp(tokens, input[i], start);
          i += 1;
        }
        continue;
      case 43:
      case 45:
      case 42:
      case 47:
      case 37: // + - * / %
        tokens.push({ kind: 'arith', text: input[i], value: input[i], position: start });
        i++;
        continue;
      case 46:
        tokens.push({ kind: 'dot', text: '.', value: '.', position: start });
        i++;
        continue;
      case 40:
        tokens.push({ kind: 'lparen', text: '(', value: '(', position: start });
        i++;
        continue;
      case 41:
        tokens.push({ kind: 'rparen', text: ')', value: ')', position: start });
        i++;
        continue;
      case 36:
        tokens.push({ kind: 'dollar', text: '$', value: '$', position: start });
        i++;
        continue;
      case 44:
        tokens.push({ kind: 'comma', text: ',', value: ',', position: start });
        i++;
        continue;
      default:
        throw syntaxError(start, `unexpected character ${describeChar(input, i)}`);
    }
  }
  tokens.push({ kind: 'end', text: '', value: '', position: n });
  return tokens;
}

function describeChar(input: string, i: number): string {
  const cp = input.codePointAt(i)!;
  const ch = String.fromCodePoint(cp);
  return cp < 32 || cp === 127 ? `U+${cp.toString(16).toUpperCase().padStart(4, '0')}` : `'${ch}'`;
}

function pushOp(tokens: Token[], op: string, position: number): void {
  tokens.push({ kind: 'op', text: op, value: op, position });
}

function lexNumber(input: string, start: number, tokens: Token[]): number {
  const n = input.length;
  let i = start;
  // Hex integers: 0x followed by 1-16 hex digits (a 64-bit pattern, so 0xffffffffffffffff is -1).
  if (
    input.charCodeAt(i) === 48 &&
    (input[i + 1] === 'x' || input[i + 1] === 'X') &&
    isHexDigit(input.charCodeAt(i + 2))
  ) {
    i += 2;
    const digitsStart = i;
    while (i < n && isHexDigit(input.charCodeAt(i))) i++;
    if (i - digitsStart > 16) throw syntaxError(start, `not a valid 64-bit hex integer: ${input.slice(start, i)}`);
    const value = BigInt.asIntN(64, BigInt('0x' + input.slice(digitsStart, i)));
    tokens.push({ kind: 'int', text: input.slice(start, i), value: Number(value), position: start });
    return i;
  }
  while (i < n && isDigit(input.charCodeAt(i))) i++;
  // Floats: digits '.' digits* exponent? suffix?, or digits exponent (`-534E-3`, which Vespa's documentation
  // lists although its lexer wants a dot). A dot followed by a letter is a call (`1.abs()`), not a fraction.
  const hasFraction = input.charCodeAt(i) === 46 && !isIdentStart(input.charCodeAt(i + 1));
  const hasExponent = (input[i] === 'e' || input[i] === 'E') && /^[eE][+-]?[0-9]/.test(input.slice(i, i + 3));
  if (hasFraction || hasExponent) {
    if (hasFraction) i++;
    while (i < n && isDigit(input.charCodeAt(i))) i++;
    if (input[i] === 'e' || input[i] === 'E') {
      let j = i + 1;
      if (input[j] === '+' || input[j] === '-') j++;
      if (isDigit(input.charCodeAt(j))) {
        while (j < n && isDigit(input.charCodeAt(j))) j++;
        i = j;
      }
    }
    const text = input.slice(start, i);
    if (/[fFdD]/.test(input[i] ?? '') && !isIdentPart(input.charCodeAt(i + 1))) i++;
    tokens.push({ kind: 'float', text: input.slice(start, i), value: Number(text), position: start });
    return i;
  }
  const text = input.slice(start, i);
  if (BigInt(text) > int64Max) throw syntaxError(start, `not a valid signed 64-bit integer: ${text}`);
  tokens.push({ kind: 'int', text, value: Number(text), position: start });
  return i;
}

/** A quoted string; escapes \\ \t \n \f \r \xHH and the string's own quote character. */
function lexString(input: string, start: number): [string, number] {
  const quote = input[start];
  const n = input.length;
  let out = '';
  let i = start + 1;
  let chunkStart = i;
  while (i < n) {
    const ch = input[i];
    if (ch === quote) {
      out += input.slice(chunkStart, i);
      return [out, i + 1];
    }
    if (ch !== '\\') {
      i++;
      continue;
    }
    out += input.slice(chunkStart, i);
    const esc = input[i + 1];
    switch (esc) {
      case '\\':
        out += '\\';
        i += 2;
        break;
      case 't':
        out += '\t';
        i += 2;
        break;
      case 'n':
        out += '\n';
        i += 2;
        break;
      case 'f':
        out += '\f';
        i += 2;
        break;
      case 'r':
        out += '\r';
        i += 2;
        break;
      case 'x': {
        const hex = input.slice(i + 2, i + 4);
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw syntaxError(i, "invalid escape in string: '\\x' needs two hex digits");
        out += String.fromCharCode(parseInt(hex, 16));
        i += 4;
        break;
      }
      default:
        if (esc === quote) {
          out += quote;
          i += 2;
          break;
        }
        if (esc === undefined) throw syntaxError(start, `unterminated string starting at position ${start}`);
        throw syntaxError(i, `invalid escape '\\${esc}' in string (allowed: \\\\ \\t \\n \\f \\r \\${quote} \\xHH)`);
    }
    chunkStart = i;
  }
  throw syntaxError(start, `unterminated string starting at position ${start}`);
}

function skipSpaces(input: string, i: number): number {
  while (i < input.length && (input[i] === ' ' || input[i] === '\t' || input[i] === '\f' || input[i] === '\r')) i++;
  return i;
}

/** `{ key }`: key is an identifier, a decimal number or a double-quoted string (only `\"` escaped). */
function lexMapLookup(input: string, start: number): [string, number] {
  let i = skipSpaces(input, start + 1);
  let key: string;
  const c = input.charCodeAt(i);
  if (input[i] === '"') {
    let j = i + 1;
    key = '';
    for (;;) {
      if (j >= input.length) throw syntaxError(i, `unterminated string starting at position ${i}`);
      if (input[j] === '\\' && input[j + 1] === '"') {
        key += '"';
        j += 2;
      } else if (input[j] === '"') {
        break;
      } else {
        key += input[j];
        j++;
      }
    }
    i = j + 1;
  } else if (input[i] === '$' || isIdentStart(c) || isDigit(c)) {
    const keyStart = i;
    if (input[i] === '$') i++;
    if (isDigit(input.charCodeAt(i)) && input[keyStart] !== '$') {
      while (isDigit(input.charCodeAt(i))) i++;
    } else {
      if (!isIdentStart(input.charCodeAt(i)))
        throw syntaxError(i, 'expected a map key (identifier, number or "string") after \'{\'');
      while (isIdentPart(input.charCodeAt(i))) i++;
    }
    key = input.slice(keyStart, i);
  } else {
    throw syntaxError(
      i,
      `expected a map key (identifier, number or "string") after '{', found ${i >= input.length ? 'end of input' : describeChar(input, i)}`,
    );
  }
  i = skipSpaces(input, i);
  if (input[i] !== '}')
    throw syntaxError(
      i,
      `expected '}' to close the map lookup at position ${start}, found ${i >= input.length ? 'end of input' : describeChar(input, i)}`,
    );
  return [key, i + 1];
}

/** `[ 3 ]` or `[ $var ]`. */
function lexArrayLookup(input: string, start: number): [string, number] {
  let i = skipSpaces(input, start + 1);
  const keyStart = i;
  if (input[i] === '$') {
    i++;
    if (!isIdentStart(input.charCodeAt(i))) throw syntaxError(i, "expected a variable name after '$'");
    while (isIdentPart(input.charCodeAt(i))) i++;
  } else if (isDigit(input.charCodeAt(i))) {
    while (isDigit(input.charCodeAt(i))) i++;
  } else {
    throw syntaxError(
      i,
      `expected an array index after '[', found ${i >= input.length ? 'end of input' : describeChar(input, i)}`,
    );
  }
  const key = input.slice(keyStart, i);
  i = skipSpaces(input, i);
  if (input[i] !== ']')
    throw syntaxError(
      i,
      `expected ']' to close the array index at position ${start}, found ${i >= input.length ? 'end of input' : describeChar(input, i)}`,
    );
  return [key, i + 1];
}
