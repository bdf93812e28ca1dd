import { maxDocumentIdLength, parseDocumentId } from '../document/id.js';
import { isNumeric, type DataType } from './data-type.js';
import type { DocumentModel } from './document-model.js';
import { checkText, isJavaInteger, readAtomic } from './value-reader.js';

/**
 * The judge's verdict for the common case, read straight from the bytes of a feed operation without building
 * a JSON tree: true when the operation is certainly accepted, that is when the feed's operation parser
 * (parseOperation) would read it and the judge (judgeDocumentOperation, on `{"fields":<raw>}`) would accept
 * it. false means only "not certain": a refusal, or a form this reader leaves to the full path (tensors,
 * field-path and match updates, escaped keys...). The caller then runs the full path, which alone words the
 * messages, so no verdict or message can differ from it. Pure: no I/O.
 *
 * Why: validate judges millions of operations; building a tree per operation and decoding its bytes twice
 * cost most of the time (and the GC), while nearly every operation of a real corpus is accepted.
 */
export function isCertainlyAccepted(model: DocumentModel, bytes: Buffer): boolean {
  reader.reset(bytes, model.ignoreUndefinedFields);
  try {
    return reader.operation(model);
  } catch {
    // A check borrowed from the judge (readAtomic, checkText) refused: the full path words it.
    return false;
  }
}

const enum B {
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Plus = 0x2b,
  Comma = 0x2c,
  Minus = 0x2d,
  Dot = 0x2e,
  Zero = 0x30,
  Nine = 0x39,
  Colon = 0x3a,
  UpperE = 0x45,
  LBracket = 0x5b,
  Backslash = 0x5c,
  RBracket = 0x5d,
  LowerE = 0x65,
  LowerF = 0x66,
  LowerN = 0x6e,
  LowerT = 0x74,
  LowerU = 0x75,
  LBrace = 0x7b,
  RBrace = 0x7d,
}

type Kind = 'put' | 'update' | 'remove';

/** The keys parseOperation knows, with the operation kind of those that name one (a key with an escape is left to it). */
const envelopeKeys = nameTable(
  new Map<string, Kind | 'fields' | 'condition' | 'create'>([
    ['put', 'put'],
    ['id', 'put'],
    ['update', 'update'],
    ['remove', 'remove'],
    ['fields', 'fields'],
    ['condition', 'condition'],
    ['create', 'create'],
  ]),
);

/** The update operations read here; the others are left to the full path. */
const updateOperations = nameTable(
  new Map(['assign', 'increment', 'decrement', 'multiply', 'divide', 'add', 'remove'].map((op) => [op, op])),
);

/** What object() does with each member: `of` is the field table, the field type, the map type or the element type. */
const enum Member {
  Field,
  UpdateField,
  UpdateOperation,
  MapEntry,
  Weight,
  Skip,
}

/** What follows a container's member: another member, the container's end, or anything else (refused). */
const enum Next {
  More,
  Closed,
  Bad,
}

/** What the last scalar token was, for the checks that need its kind or its text. */
const enum Token {
  String,
  Integer,
  Decimal,
  True,
  False,
  Null,
}

class QuickReader {
  pos = 0;
  /** Set by string(): the string held a backslash escape / a byte outside ASCII. */
  private escaped = false;
  private nonAscii = false;
  /** Set by scalar(): the token's kind and extent. */
  private token: Token = Token.Null;
  private tokenStart = 0;
  private tokenEnd = 0;
  /** Set by key(): the last key's place (quotes included) and flags. */
  private keyStart = 0;
  private keyEnd = 0;
  private keyEscaped = false;
  private keyNonAscii = false;

  private buf: Buffer = Buffer.alloc(0);
  private ignoreUndefined = false;

  reset(buf: Buffer, ignoreUndefined: boolean): void {
    this.buf = buf;
    this.ignoreUndefined = ignoreUndefined;
    this.pos = 0;
  }

  /** The envelope, as parseOperation reads it, restricted to its plain forms; then the fields, as the judge reads them. */
  operation(model: DocumentModel): boolean {
    const buf = this.buf;
    this.ws();
    // `{}` names no operation.
    if (buf[this.pos] !== B.LBrace || this.openEmpty(B.RBrace)) return false;
    let kind: Kind | undefined;
    let type: Fields | undefined;
    let fieldsAt = -1;
    let judged = false;
    let hasCondition = false;
    let hasCreate = false;
    for (;;) {
      if (buf[this.pos] !== B.Quote || !this.key() || this.keyEscaped) return false;
      const key = this.lookupKey(envelopeKeys);
      if (!this.colon() || key === undefined) return false;
      if (key !== 'fields' && key !== 'condition' && key !== 'create') {
        if (kind !== undefined || buf[this.pos] !== B.Quote) return false;
        kind = key;
        const start = this.pos;
        if (!this.string() || this.escaped) return false;
        type = this.documentType(model, start + 1, this.pos - 1);
        // An id the feed would refuse, or of a type the package lacks (which the judge refuses), is left to the full path.
        if (type === undefined) return false;
      } else if (key === 'fields') {
        if (fieldsAt >= 0 || buf[this.pos] !== B.LBrace) return false;
        fieldsAt = this.pos;
        if (kind !== undefined && kind !== 'remove' && type !== undefined) {
          if (!this.fields(kind, type)) return false;
          judged = true;
        } else if (!this.skip()) return false;
      } else if (key === 'condition') {
        if (hasCondition || buf[this.pos] !== B.Quote || !this.string()) return false;
        hasCondition = true;
      } else if (key === 'create') {
        if (hasCreate) return false;
        hasCreate = true;
        if (!this.scalar() || (this.token !== Token.True && this.token !== Token.False)) return false;
      }
      const next = this.next(B.RBrace);
      if (next === Next.Bad) return false;
      if (next === Next.Closed) break;
    }
    this.ws();
    if (this.pos !== buf.length || kind === undefined || type === undefined) return false;
    if (kind === 'remove') return fieldsAt < 0;
    if (fieldsAt < 0) return false;
    if (judged) return true;
    this.pos = fieldsAt;
    return this.fields(kind, type);
  }

  /**
   * The document type of the id in buf[start, end) (a string's content, without escapes) when parseDocumentId
   * accepts the id and the model has its type; undefined otherwise. Plain ASCII ids are checked on the bytes.
   */
  private documentType(model: DocumentModel, start: number, end: number): Fields | undefined {
    const buf = this.buf;
    const c1 =
      this.nonAscii ||
      end - start > maxDocumentIdLength ||
      buf[start] !== 0x69 ||
      buf[start + 1] !== 0x64 ||
      buf[start + 2] !== B.Colon
        ? end
        : colonAt(buf, start + 3, end);
    const c2 = colonAt(buf, c1 + 1, end);
    const c3 = colonAt(buf, c2 + 1, end);
    if (c3 >= end || c1 === start + 3 || c2 === c1 + 1 || c3 + 1 === end || c3 !== c2 + 1) {
      // Not a plain id of ASCII text: as parseOperation checks it.
      const id = this.nonAscii ? utf8(buf, start, end) : latin1(buf, start, end);
      try {
        parseDocumentId(id);
      } catch {
        return undefined;
      }
      const i1 = id.indexOf(':', 3);
      return typeTable(model).byName.get(id.slice(i1 + 1, id.indexOf(':', i1 + 1)));
    }
    return this.lookup(typeTable(model), c1 + 1, c2);
  }

  /** The `fields` object of a put or an update (judgePutFields, judgeUpdateFields). */
  private fields(kind: 'put' | 'update', table: Fields): boolean {
    return kind === 'put' ? this.object(Member.Field, table) : this.object(Member.UpdateField, table);
  }

  /** A field of a put or a struct member: undefined ones skipped when so configured, nulls skipped. */
  private member(table: Fields): boolean {
    const fieldType = this.keyEscaped ? table.byName.get(this.keyText()) : this.lookupKey(table);
    if (fieldType === undefined) return this.ignoreUndefined && this.skip();
    if (this.buf[this.pos] === B.LowerN) return this.scalar() && this.token === Token.Null;
    return this.value(fieldType);
  }

  private updateField(table: Fields): boolean {
    if (this.buf[this.pos] !== B.LBrace) return false;
    // Field paths (`s.x`, `m{k}`, `a[0]`) are left to the full path.
    if (this.keyEscaped || this.keyHasPathChar()) return false;
    const fieldType = this.lookupKey(table);
    if (fieldType === undefined) return this.ignoreUndefined && this.skip();
    return this.object(Member.UpdateOperation, fieldType);
  }

  /** One operation of a field update (judgeValueUpdate), for assign, the arithmetic ones, and add/remove on arrays and weighted sets. */
  private valueUpdate(type: QType, op: string | undefined): boolean {
    const c = this.buf[this.pos];
    switch (op) {
      case 'assign':
        if (c === B.LowerN) return this.scalar() && this.token === Token.Null;
        return this.value(type);
      case 'increment':
      case 'decrement':
      case 'multiply':
      case 'divide':
        if (!type.numeric || c === B.LBrace || c === B.LBracket || !this.scalar()) return false;
        return this.atomic(doubleType);
      case 'add':
      case 'remove':
        if (type.k === K.Array) return c === B.LBracket && this.elements(type.element!);
        if (type.k === K.WeightedSet) return c === B.LBrace && this.weights(type.element!);
        return false;
      default:
        return false;
    }
  }

  /** One value of a type (readValue). */
  private value(type: QType): boolean {
    const k = type.k;
    if (k === K.Tensor) return false;
    const c = this.buf[this.pos];
    if (c === B.LBrace) {
      if (k === K.Struct) return this.object(Member.Field, type.fields);
      if (k === K.Map) return this.object(Member.MapEntry, type);
      if (k === K.WeightedSet) return this.weights(type.element!);
      return k === K.Unknown && this.skip();
    }
    if (c === B.LBracket) {
      if (k === K.Array) return this.elements(type.element!);
      return k === K.Unknown && this.skip();
    }
    return this.scalar() && this.atomic(type);
  }

  /** Array items: no nulls, each a value of the element type. */
  private elements(element: QType): boolean {
    if (this.openEmpty(B.RBracket)) return true;
    for (;;) {
      if (this.buf[this.pos] === B.LowerN || !this.value(element)) return false;
      const next = this.next(B.RBracket);
      if (next !== Next.More) return next === Next.Closed;
    }
  }

  /** `{key: weight}` (readWeights): keys of the element type, weights 32-bit integers. */
  private weights(element: QType): boolean {
    return this.object(Member.Weight, element);
  }

  private weight(element: QType): boolean {
    if (!this.keyAtomic(element) || !this.scalar()) return false;
    if (this.token === Token.Integer) return this.tokenEnd - this.tokenStart < 10 || isJavaInteger(this.text(), 32);
    return isJavaInteger(this.text(), 32);
  }

  /** The scalar token just read, as a value of `type` (readAtomic), with the common cases decided from the bytes. */
  private atomic(type: QType): boolean {
    const token = this.token;
    switch (type.k) {
      case K.Int:
        if (token === Token.Integer && this.tokenEnd - this.tokenStart < 10) return true;
        break;
      case K.Long:
        if (token === Token.Integer && this.tokenEnd - this.tokenStart < 19) return true;
        break;
      case K.Float:
        // Every JSON number is a Java double's text.
        if (token === Token.Integer || token === Token.Decimal) return true;
        break;
      case K.Bool:
      case K.Unknown:
        return true;
      case K.String:
        if (token !== Token.String || (!this.escaped && !this.nonAscii)) return true;
        checkText(this.text());
        return true;
      case K.Array:
      case K.WeightedSet:
      case K.Map:
      case K.Struct:
        // A scalar for a collection or a struct is always refused.
        return false;
    }
    readAtomic(this.text(), type.source);
    return true;
  }

  /** The key just read, as a value of `type` (readAtomic on the decoded key). */
  private keyAtomic(type: QType): boolean {
    this.token = Token.String;
    this.tokenStart = this.keyStart;
    this.tokenEnd = this.keyEnd;
    this.escaped = this.keyEscaped;
    this.nonAscii = this.keyNonAscii;
    return this.atomic(type);
  }

  /** The token's text as the judge's tokenText gives it: strings decoded, numbers as written, literals by name. */
  private text(): string {
    const buf = this.buf;
    const start = this.tokenStart;
    const end = this.tokenEnd;
    switch (this.token) {
      case Token.String:
        if (this.escaped) return JSON.parse(utf8(buf, start, end)) as string;
        return this.nonAscii ? utf8(buf, start + 1, end - 1) : latin1(buf, start + 1, end - 1);
      case Token.Integer:
      case Token.Decimal:
        return latin1(buf, start, end);
      case Token.True:
        return 'true';
      case Token.False:
        return 'false';
      case Token.Null:
        return 'null';
    }
  }

  /** The key just read, decoded. */
  private keyText(): string {
    const buf = this.buf;
    if (this.keyEscaped) return JSON.parse(utf8(buf, this.keyStart, this.keyEnd)) as string;
    return this.keyNonAscii
      ? utf8(buf, this.keyStart + 1, this.keyEnd - 1)
      : latin1(buf, this.keyStart + 1, this.keyEnd - 1);
  }

  /** What `table` holds for the key just read; the key must have no escape. */
  private lookupKey<T>(table: NameTable<T>): T | undefined {
    return this.lookup(table, this.keyStart + 1, this.keyEnd - 1);
  }

  /** What `table` holds for the name in buf[start, end), compared as bytes: no text is made. */
  private lookup<T>(table: NameTable<T>, start: number, end: number): T | undefined {
    const buf = this.buf;
    const length = end - start;
    if (length === 0) return table.empty;
    const first = buf[start];
    const last = buf[end - 1];
    const candidates = table.bySlot[slotOf(length, first, last)];
    if (candidates === undefined) return undefined;
    for (let c = 0; c < candidates.length; c++) {
      const name = candidates[c].bytes;
      if (name.length !== length || name[0] !== first || name[length - 1] !== last) continue;
      let k = 1;
      while (k < length - 1 && name[k] === buf[start + k]) k++;
      if (k >= length - 1) return candidates[c].value;
    }
    return undefined;
  }

  private keyHasPathChar(): boolean {
    const buf = this.buf;
    for (let p = this.keyStart + 1; p < this.keyEnd - 1; p++) {
      const c = buf[p];
      if (c === B.Dot || c === B.LBracket || c === B.LBrace) return true;
    }
    return false;
  }

  /** A key at `pos` (on its quote): its place and flags kept for lookup() and keyText(). */
  private key(): boolean {
    const start = this.pos;
    if (!this.string()) return false;
    this.keyStart = start;
    this.keyEnd = this.pos;
    this.keyEscaped = this.escaped;
    this.keyNonAscii = this.nonAscii;
    return true;
  }

  /**
   * An object at `pos` (on its `{`): each key read (see key()), then `member` with `pos` on the value, which it
   * must read whole. True when every member was.
   */
  private object(mode: Member, of: unknown): boolean {
    if (this.openEmpty(B.RBrace)) return true;
    for (;;) {
      if (this.buf[this.pos] !== B.Quote || !this.key() || !this.colon()) return false;
      if (!this.objectMember(mode, of)) return false;
      const next = this.next(B.RBrace);
      if (next !== Next.More) return next === Next.Closed;
    }
  }

  /** On a container's opening byte: steps in; true when the container is empty (`pos` then after `close`). */
  private openEmpty(close: number): boolean {
    this.pos++;
    this.ws();
    if (this.buf[this.pos] !== close) return false;
    this.pos++;
    return true;
  }

  /** After a key: the colon and the white space around it; `pos` then on the value. */
  private colon(): boolean {
    this.ws();
    if (this.buf[this.pos] !== B.Colon) return false;
    this.pos++;
    this.ws();
    return true;
  }

  /** After a container's member: past the `,` and the white space after it, or past `close`. */
  private next(close: number): Next {
    this.ws();
    const c = this.buf[this.pos];
    this.pos++;
    if (c === close) return Next.Closed;
    if (c !== B.Comma) return Next.Bad;
    this.ws();
    return Next.More;
  }

  /** One member of an object read by object(), `pos` on its value (a switch rather than a callback: no closure per object). */
  private objectMember(mode: Member, of: unknown): boolean {
    switch (mode) {
      case Member.Field:
        return this.member(of as Fields);
      case Member.UpdateField:
        return this.updateField(of as Fields);
      case Member.UpdateOperation:
        return !this.keyEscaped && this.valueUpdate(of as QType, this.lookupKey(updateOperations));
      case Member.MapEntry: {
        const map = of as QType;
        return this.keyAtomic(map.key!) && this.value(map.value!);
      }
      case Member.Weight:
        return this.weight(of as QType);
      case Member.Skip:
        return this.skip();
    }
  }

  /** Any value, checked for syntax only (values the judge reads but does not type). */
  private skip(): boolean {
    const c = this.buf[this.pos];
    if (c === B.LBrace) return this.object(Member.Skip, undefined);
    if (c === B.LBracket) {
      if (this.openEmpty(B.RBracket)) return true;
      for (;;) {
        if (!this.skip()) return false;
        const next = this.next(B.RBracket);
        if (next !== Next.More) return next === Next.Closed;
      }
    }
    return this.scalar();
  }

  /** A string, number or literal at `pos`, strictly as the judge's JSON reader takes it. */
  private scalar(): boolean {
    const buf = this.buf;
    const start = this.pos;
    this.tokenStart = start;
    const c = buf[start];
    if (c === B.Quote) {
      this.token = Token.String;
      const ok = this.string();
      this.tokenEnd = this.pos;
      return ok;
    }
    if (c === B.LowerT) return this.literal(Token.True, 0x72, 0x75, 0x65, -1);
    if (c === B.LowerF) return this.literal(Token.False, 0x61, 0x6c, 0x73, 0x65);
    if (c === B.LowerN) return this.literal(Token.Null, 0x75, 0x6c, 0x6c, -1);
    // -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
    let p = start;
    if (buf[p] === B.Minus) p++;
    let d = buf[p];
    if (d === B.Zero) p++;
    else if (d > B.Zero && d <= B.Nine) {
      p++;
      while ((d = buf[p]!) >= B.Zero && d <= B.Nine) p++;
    } else return false;
    let token = Token.Integer;
    if (buf[p] === B.Dot) {
      p++;
      if (!((d = buf[p]!) >= B.Zero && d <= B.Nine)) return false;
      while ((d = buf[p]!) >= B.Zero && d <= B.Nine) p++;
      token = Token.Decimal;
    }
    if (buf[p] === B.LowerE || buf[p] === B.UpperE) {
      p++;
      if (buf[p] === B.Plus || buf[p] === B.Minus) p++;
      if (!((d = buf[p]!) >= B.Zero && d <= B.Nine)) return false;
      while ((d = buf[p]!) >= B.Zero && d <= B.Nine) p++;
      token = Token.Decimal;
    }
    this.token = token;
    this.pos = p;
    this.tokenEnd = p;
    return true;
  }

  private literal(token: Token, b1: number, b2: number, b3: number, b4: number): boolean {
    const buf = this.buf;
    const p = this.pos;
    if (buf[p + 1] !== b1 || buf[p + 2] !== b2 || buf[p + 3] !== b3) return false;
    if (b4 >= 0 && buf[p + 4] !== b4) return false;
    this.token = token;
    this.pos = p + (b4 >= 0 ? 5 : 4);
    this.tokenEnd = this.pos;
    return true;
  }

  /** A string at `pos` (on its quote): no raw control characters, only the escapes JSON has; `pos` after its closing quote. */
  private string(): boolean {
    const buf = this.buf;
    const end = buf.length;
    let p = this.pos + 1;
    let escaped = false;
    let nonAscii = false;
    for (;;) {
      // Plain ASCII text, the bulk of most strings, in a tight loop.
      while (p < end && plainByte[buf[p]] === 1) p++;
      if (p >= end) return false;
      const c = buf[p];
      if (c === B.Quote) break;
      if (c < B.Space) return false;
      if (c === B.Backslash) {
        escaped = true;
        const e = buf[p + 1];
        if (e === B.LowerU) {
          for (let k = p + 2; k < p + 6; k++) if (!isHex(buf[k])) return false;
          p += 6;
          continue;
        }
        // " \ / b f n r t
        if (
          e !== 0x22 &&
          e !== 0x5c &&
          e !== 0x2f &&
          e !== 0x62 &&
          e !== 0x66 &&
          e !== 0x6e &&
          e !== 0x72 &&
          e !== 0x74
        )
          return false;
        p += 2;
        continue;
      }
      nonAscii = true;
      p++;
    }
    this.pos = p + 1;
    this.escaped = escaped;
    this.nonAscii = nonAscii;
    return true;
  }

  private ws(): void {
    const buf = this.buf;
    let p = this.pos;
    for (;;) {
      const c = buf[p];
      if (c === B.Space || c === B.Lf || c === B.Cr || c === B.Tab) p++;
      else break;
    }
    this.pos = p;
  }
}

// One reader, reset per operation: the judgement is synchronous, so it is never shared.
const reader = new QuickReader();

/** 1 for the bytes a string holds as they are: printable ASCII but the quote and the backslash. */
const plainByte = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) if (c !== B.Quote && c !== B.Backslash) plainByte[c] = 1;

/** The first ':' in buf[from, end), or `end` (a loop: cheaper than Buffer's indexOf over a few bytes). */
function colonAt(buf: Buffer, from: number, end: number): number {
  let p = from;
  while (p < end && buf[p] !== B.Colon) p++;
  return p < end ? p : end;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/** ASCII bytes (checked by the caller) as text: the cheapest decoding. */
function latin1(buf: Buffer, start: number, end: number): string {
  return buf.toString('latin1', start, end);
}

/** As the full path decodes (Buffer's UTF-8, bad sequences replaced), so that texts the checks see are the same. */
function utf8(buf: Buffer, start: number, end: number): string {
  return buf.toString('utf8', start, end);
}

/**
 * Names looked up by their UTF-8 bytes without making text: candidates in a slot picked by length, first and
 * last byte, then the bytes compared.
 */
interface NameTable<T> {
  bySlot: ({ bytes: Buffer; value: T }[] | undefined)[];
  /** The value of the empty name. */
  empty: T | undefined;
  byName: Map<string, T>;
}

/** One of 256 slots (a literal, not a constant: tables are built while the module loads). */
function slotOf(length: number, first: number, last: number): number {
  return (length * 37 + first * 7 + last) & 255;
}

function nameTable<T>(byName: Map<string, T>): NameTable<T> {
  const bySlot: ({ bytes: Buffer; value: T }[] | undefined)[] = new Array<{ bytes: Buffer; value: T }[] | undefined>(
    256,
  ).fill(undefined);
  for (const [name, value] of byName) {
    const bytes = Buffer.from(name, 'utf8');
    if (bytes.length === 0) continue;
    const slot = slotOf(bytes.length, bytes[0], bytes[bytes.length - 1]);
    (bySlot[slot] ??= []).push({ bytes, value });
  }
  return { bySlot, empty: byName.get(''), byName };
}

/** How the quick reader handles a type; every other type's scalars go to the judge's readAtomic. */
const enum K {
  Int,
  Long,
  Float,
  Bool,
  String,
  Atomic,
  Array,
  WeightedSet,
  Map,
  Struct,
  Tensor,
  Unknown,
}

/** A field type compiled for the quick reader: one object shape for every type, so that reading `k` stays cheap. */
class QType {
  element: QType | undefined = undefined;
  key: QType | undefined = undefined;
  value: QType | undefined = undefined;
  fields: Fields | undefined = undefined;
  constructor(
    readonly k: K,
    /** The judge's type, for readAtomic. */
    readonly source: DataType,
    readonly numeric: boolean,
  ) {}
}

/** The fields of a document type or a struct, by name. */
type Fields = NameTable<QType>;

const primitiveKinds: Record<string, K> = {
  int: K.Int,
  long: K.Long,
  float: K.Float,
  double: K.Float,
  float16: K.Float,
  bool: K.Bool,
  string: K.String,
};

// Compiled once per type of a model (a struct that refers to itself is compiled once, then met again).
const compiled = new WeakMap<DataType, QType>();

function compile(type: DataType): QType {
  const done = compiled.get(type);
  if (done !== undefined) return done;
  const kinds: Record<DataType['kind'], K> = {
    primitive: K.Atomic,
    array: K.Array,
    weightedset: K.WeightedSet,
    map: K.Map,
    struct: K.Struct,
    position: K.Atomic,
    reference: K.Atomic,
    tensor: K.Tensor,
    unknown: K.Unknown,
  };
  const q = new QType(
    type.kind === 'primitive' ? (primitiveKinds[type.name] ?? K.Atomic) : kinds[type.kind],
    type,
    isNumeric(type),
  );
  compiled.set(type, q);
  if (type.kind === 'array' || type.kind === 'weightedset') q.element = compile(type.element);
  else if (type.kind === 'map') {
    q.key = compile(type.key);
    q.value = compile(type.value);
  } else if (type.kind === 'struct') q.fields = fieldTable(type.fields);
  return q;
}

const doubleType = compile({ kind: 'primitive', name: 'double' });

function fieldTable(fields: Map<string, DataType>): Fields {
  return nameTable(new Map([...fields].map(([name, type]) => [name, compile(type)])));
}

const typeTables = new WeakMap<DocumentModel, NameTable<Fields>>();

let lastModel: DocumentModel | undefined;
let lastTypeTable: NameTable<Fields> | undefined;

function typeTable(model: DocumentModel): NameTable<Fields> {
  if (model === lastModel) return lastTypeTable!;
  let table = typeTables.get(model);
  if (table === undefined) {
    table = nameTable(new Map([...model.types].map(([name, type]) => [name, fieldTable(type.fields)])));
    typeTables.set(model, table);
  }
  lastModel = model;
  lastTypeTable = table;
  return table;
}
