/**
 * A JSON reader that keeps what the document parser sees: number text exactly as written (a `long` beyond 2^53
 * must not pass through a double), each value's token kind, and each value's place in the text (so a value can
 * be stored or re-sent as the very bytes it was given). Syntax errors carry Jackson's wording, since the
 * service answers with Jackson's message. Pure: no I/O.
 */
export type JsonNode =
  | { kind: 'string'; value: string; start: number; end: number }
  | { kind: 'number'; text: string; integer: boolean; start: number; end: number }
  | { kind: 'true' | 'false' | 'null'; start: number; end: number }
  | { kind: 'object'; entries: [string, JsonNode][]; start: number; end: number }
  | { kind: 'array'; items: JsonNode[]; start: number; end: number };

/** A syntax error at `offset` of the text, with Jackson's message (without its location suffix). */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
    /** Set when the text holds a valid token after the root value: that token's name (the parser's own error). */
    readonly trailingToken?: string,
    /**
     * Bytes past `offset` that Jackson's column counts, for what it read before it reported: the rest of an
     * unexpected character (it names the column of its last UTF-8 byte), or an unrecognized token and the
     * character after it.
     */
    readonly extraBytes = 0,
  ) {
    super(message);
  }
}

/** Jackson's token names, as the document parser's messages print them. */
export function tokenName(node: JsonNode | undefined): string {
  if (node === undefined) return 'null';
  switch (node.kind) {
    case 'string':
      return 'VALUE_STRING';
    case 'number':
      return node.integer ? 'VALUE_NUMBER_INT' : 'VALUE_NUMBER_FLOAT';
    case 'true':
      return 'VALUE_TRUE';
    case 'false':
      return 'VALUE_FALSE';
    case 'null':
      return 'VALUE_NULL';
    case 'object':
      return 'START_OBJECT';
    case 'array':
      return 'START_ARRAY';
  }
}

/** The text a scalar token gives the parser: strings decoded, numbers as written, literals by name. */
export function tokenText(node: JsonNode): string {
  switch (node.kind) {
    case 'string':
      return node.value;
    case 'number':
      return node.text;
    case 'true':
    case 'false':
    case 'null':
      return node.kind;
    default:
      return '';
  }
}

/** The text the parser gives at a value's first token: a scalar's text, `{` or `[` where an object or array starts. */
export function firstTokenText(node: JsonNode): string {
  switch (node.kind) {
    case 'object':
      return '{';
    case 'array':
      return '[';
    default:
      return tokenText(node);
  }
}

/** Parses one JSON value filling the whole text (whitespace around it allowed); undefined for an empty text. */
export function parseJsonTree(text: string): JsonNode | undefined {
  const reader = new Reader(text);
  reader.skipWs();
  if (reader.pos >= text.length) return undefined;
  const node = reader.value();
  reader.skipWs();
  if (reader.pos < text.length) {
    const at = reader.pos;
    const trailing = reader.value();
    throw new JsonSyntaxError('expected end of input', at, tokenName(trailing));
  }
  return node;
}

/**
 * The place of an offset as Jackson reports it: `line: L, column: C` (both 1-based). The service reads bodies as
 * bytes, so the column counts UTF-8 bytes.
 */
export function jacksonLocation(text: string, offset: number, extraBytes = 0): string {
  return `\n at ${jacksonPlace(text, offset, extraBytes)}`;
}

function jacksonPlace(text: string, offset: number, extraBytes = 0): string {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = Buffer.byteLength(text.slice(lineStart, offset)) + 1 + extraBytes;
  return `[Source: REDACTED (\`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION\` disabled); line: ${line}, column: ${column}]`;
}

const numberPattern = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class Reader {
  pos = 0;
  constructor(private readonly text: string) {}

  skipWs(): void {
    const t = this.text;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 32 || c === 10 || c === 13 || c === 9) p++;
      else break;
    }
    this.pos = p;
  }

  value(): JsonNode {
    const t = this.text;
    const start = this.pos;
    const c = t.charCodeAt(start);
    switch (c) {
      case 123:
        return this.object();
      case 91:
        return this.array();
      case 34: {
        const value = this.string();
        return { kind: 'string', value, start, end: this.pos };
      }
      case 116:
        return this.literal('true', start);
      case 102:
        return this.literal('false', start);
      case 110:
        return this.literal('null', start);
      default:
        if (c === 45 || (c >= 48 && c <= 57)) {
          numberPattern.lastIndex = start;
          const m = numberPattern.exec(t);
          if (m === null) throw this.unexpected('expected digit (0-9) to follow minus sign, for valid numeric value');
          this.pos = start + m[0].length;
          return {
            kind: 'number',
            text: m[0],
            integer: m[1] === undefined && m[2] === undefined,
            start,
            end: this.pos,
          };
        }
        if (Number.isNaN(c)) throw new JsonSyntaxError('Unexpected end-of-input: expected a value', start);
        throw this.unrecognized();
    }
  }

  private literal(word: 'true' | 'false' | 'null', start: number): JsonNode {
    if (!this.text.startsWith(word, start)) throw this.unrecognized();
    this.pos = start + word.length;
    return { kind: word, start, end: this.pos };
  }

  private object(): JsonNode {
    const start = this.pos;
    this.pos++;
    const entries: [string, JsonNode][] = [];
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 125) {
      this.pos++;
      return { kind: 'object', entries, start, end: this.pos };
    }
    for (;;) {
      if (this.text.charCodeAt(this.pos) !== 34) {
        if (this.pos >= this.text.length) throw this.endInside('Object', start);
        throw this.unexpected('was expecting double-quote to start field name');
      }
      const key = this.string();
      this.skipWs();
      if (this.text.charCodeAt(this.pos) !== 58)
        throw this.unexpected('was expecting a colon to separate field name and value');
      this.pos++;
      this.skipWs();
      entries.push([key, this.value()]);
      if (this.closes(125, 'Object', start)) return { kind: 'object', entries, start, end: this.pos };
    }
  }

  private array(): JsonNode {
    const start = this.pos;
    this.pos++;
    const items: JsonNode[] = [];
    this.skipWs();
    if (this.text.charCodeAt(this.pos) === 93) {
      this.pos++;
      return { kind: 'array', items, start, end: this.pos };
    }
    for (;;) {
      items.push(this.value());
      if (this.closes(93, 'Array', start)) return { kind: 'array', items, start, end: this.pos };
    }
  }

  /**
   * After a member of an object or array: true past its `close`, false past the `,` (and the white space) before
   * the next member; Jackson's error for anything else.
   */
  private closes(close: number, entries: 'Object' | 'Array', start: number): boolean {
    this.skipWs();
    const c = this.text.charCodeAt(this.pos);
    if (c === 44) {
      this.pos++;
      this.skipWs();
      return false;
    }
    if (c === close) {
      this.pos++;
      return true;
    }
    if (Number.isNaN(c)) throw this.endInside(entries, start);
    throw this.unexpected(`was expecting comma to separate ${entries} entries`);
  }

  /** The input ends inside the object or array opened at `start`: Jackson names it and where it began. */
  private endInside(container: 'Object' | 'Array', start: number): JsonSyntaxError {
    return new JsonSyntaxError(
      `Unexpected end-of-input: expected close marker for ${container} (start marker at ${jacksonPlace(this.text, start)})`,
      this.pos,
    );
  }

  /** Reads a string token at `pos` (on its opening quote) and returns its decoded value. */
  private string(): string {
    const t = this.text;
    let p = this.pos + 1;
    let out = '';
    let runStart = p;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 34) break;
      if (Number.isNaN(c)) throw new JsonSyntaxError('Unexpected end-of-input in VALUE_STRING', p);
      if (c < 32) {
        throw new JsonSyntaxError(
          `Illegal unquoted character ((CTRL-CHAR, code ${c})): has to be escaped using backslash to be included in string value`,
          p,
        );
      }
      if (c === 92) {
        out += t.slice(runStart, p);
        const e = t.charCodeAt(p + 1);
        p += 2;
        switch (e) {
          case 34:
            out += '"';
            break;
          case 92:
            out += '\\';
            break;
          case 47:
            out += '/';
            break;
          case 98:
            out += '\b';
            break;
          case 102:
            out += '\f';
            break;
          case 110:
            out += '\n';
            break;
          case 114:
            out += '\r';
            break;
          case 116:
            out += '\t';
            break;
          case 117: {
            const hex = t.slice(p, p + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex))
              throw new JsonSyntaxError('Unexpected character: expected a hex-digit for character escape sequence', p);
            out += String.fromCharCode(parseInt(hex, 16));
            p += 4;
            break;
          }
          default:
            throw new JsonSyntaxError(`Unrecognized character escape ${describeChar(e)}`, p - 1);
        }
        runStart = p;
        continue;
      }
      p++;
    }
    out += t.slice(runStart, p);
    this.pos = p + 1;
    return out;
  }

  unexpected(expectation: string): JsonSyntaxError {
    const c = this.text.charCodeAt(this.pos);
    if (Number.isNaN(c)) return new JsonSyntaxError(`Unexpected end-of-input: ${expectation}`, this.pos);
    const codePoint = this.text.codePointAt(this.pos)!;
    const extraBytes = Buffer.byteLength(String.fromCodePoint(codePoint)) - 1;
    return new JsonSyntaxError(
      `Unexpected character (${describeChar(c, codePoint)}): ${expectation}`,
      this.pos,
      undefined,
      extraBytes,
    );
  }

  /**
   * A value that starts with neither of JSON's: Jackson takes the run of Java identifier characters as the token
   * (at most 256, then `...`), reads one character past it, and reports where it stopped.
   */
  private unrecognized(): JsonSyntaxError {
    const valid = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')";
    if (!identifierStart.test(String.fromCodePoint(this.text.codePointAt(this.pos)!)))
      return this.unexpected(`expected a valid value ${valid}`);
    let end = this.pos;
    let token = '';
    while (end < this.text.length) {
      const ch = String.fromCodePoint(this.text.codePointAt(end)!);
      end += ch.length;
      if (!identifierPart.test(ch)) break;
      token += ch;
      if (token.length >= 256) {
        token += '...';
        break;
      }
    }
    return new JsonSyntaxError(
      `Unrecognized token '${token}': was expecting ${valid}`,
      this.pos,
      undefined,
      Buffer.byteLength(this.text.slice(this.pos, end)),
    );
  }
}

// Java's Character.isJavaIdentifierStart and isJavaIdentifierPart, near enough for error messages.
const identifierStart = /^[\p{L}\p{Nl}\p{Sc}\p{Pc}]$/u;
const identifierPart = /^[\p{L}\p{Nl}\p{Nd}\p{Sc}\p{Pc}\p{Mn}\p{Mc}]$/u;

/** Jackson's `('x' (code 120))` description of a character. */
function describeChar(code: number, codePoint = code): string {
  const ch = String.fromCodePoint(codePoint);
  if (codePoint < 32) return `(CTRL-CHAR, code ${codePoint})`;
  return codePoint > 127 ? `'${ch}' (code ${codePoint} / 0x${codePoint.toString(16)})` : `'${ch}' (code ${codePoint})`;
}

/** The node as the value JSON.parse would give (numbers as doubles): for readers that take plain JSON, such as the tensor reader. */
export function plainValue(node: JsonNode): unknown {
  switch (node.kind) {
    case 'string':
      return node.value;
    case 'number':
      return Number(node.text);
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
    case 'array':
      return node.items.map(plainValue);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, v] of node.entries) out[k] = plainValue(v);
      return out;
    }
  }
}
