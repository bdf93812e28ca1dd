import { huffmanDecode } from './huffman.js';

/**
 * HPACK (RFC 7541) for this client's HTTP/2 connections. Pure: bytes in, bytes out.
 *
 * The encoder is built for many requests that differ only in their path: it indexes every header of a
 * connection's fixed set (`:authority`, `content-type`, a token) in the dynamic table the first time and sends
 * a one-byte reference after that, and writes the path as a literal that is never indexed. It never
 * Huffman-codes (that would cost CPU per request to save bytes on loopback-fast links). The decoder reads
 * everything a server may send: the dynamic table, size updates, Huffman strings.
 */

/** The static table (RFC 7541 Appendix A), index 1 first. */
// prettier-ignore
export const staticTable: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

const staticCount = staticTable.length;

/** Per-entry overhead of the dynamic table's size accounting (RFC 7541, 4.1). */
const entryOverhead = 32;

/** A malformed header block: the connection cannot go on (COMPRESSION_ERROR). */
export class HpackError extends Error {}

/**
 * A header block whose fields add up to more than the bound given to `decode` (name + value + 32 bytes each, as
 * SETTINGS_MAX_HEADER_LIST_SIZE counts them, RFC 9113 6.5.2). The block was not decoded to its end, so the table
 * may be behind the peer's: the connection cannot go on.
 */
export class HeaderListTooLarge extends Error {}

/** A table entry: name, value, and why the field breaks HTTP/2's character rules (undefined: it does not). */
type Entry = readonly [string, string, string?];

/** The dynamic table, newest first, with its size accounting. Shared by both directions' bookkeeping. */
class DynamicTable {
  private entries: Entry[] = [];
  private size = 0;
  constructor(private max: number) {}

  get(index: number): Entry | undefined {
    return this.entries[index];
  }

  get length(): number {
    return this.entries.length;
  }

  add(name: string, value: string, fault?: string): void {
    const size = name.length + value.length + entryOverhead;
    this.entries.unshift(fault === undefined ? [name, value] : [name, value, fault]);
    this.size += size;
    this.evict();
  }

  resize(max: number): void {
    this.max = max;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.max && this.entries.length > 0) {
      const [n, v] = this.entries.pop()!;
      this.size -= n.length + v.length + entryOverhead;
    }
  }
}

/** Header names and values as a flat list, `[name, value, name, value, ...]`, names in lower case. */
export type HeaderList = string[];

export class HpackDecoder {
  private readonly table: DynamicTable;
  /** The largest table size this side allows (our SETTINGS_HEADER_TABLE_SIZE): size updates above it are errors. */
  private readonly limit: number;
  /**
   * After `decode`: why the block's fields break HTTP/2's rules for names and values (RFC 9113, 8.2.1), or
   * undefined. Such a block is still decoded whole (the table must follow it); what the message means is the
   * caller's to say (a malformed message: a stream error). Checked as literals are read, so a field from the
   * table costs nothing: its entry remembers what was found when it came in.
   */
  malformed: string | undefined;

  /** Where `decode` reads, and the literal `literal` read last: kept here, so a block allocates only its list and strings. */
  private readonly r = { at: 0 };
  private name = '';
  private value = '';
  private fault: string | undefined = undefined;

  constructor(maxTableSize = 4096) {
    this.table = new DynamicTable(maxTableSize);
    this.limit = maxTableSize;
  }

  /**
   * Decodes one complete header block. Throws `HpackError` for anything malformed, and `HeaderListTooLarge` as
   * soon as the fields add up to more than `maxListSize`.
   */
  decode(buf: Uint8Array, start = 0, end = buf.length, maxListSize = Infinity): HeaderList {
    const out: HeaderList = [];
    const r = this.r;
    r.at = start;
    let fieldSeen = false;
    let listSize = 0;
    this.malformed = undefined;
    while (r.at < end) {
      const b = buf[r.at];
      let name: string;
      let value: string;
      if (b & 0x80) {
        // Indexed field.
        const entry = this.lookup(readInt(buf, r, end, 7));
        name = entry[0];
        value = entry[1];
        if (entry[2] !== undefined) this.malformed ??= entry[2];
      } else if (b & 0x40) {
        // Literal with incremental indexing.
        this.literal(buf, r, end, 6);
        name = this.name;
        value = this.value;
        this.table.add(name, value, this.fault);
      } else if (b & 0x20) {
        // Dynamic table size update: only at the start of a block.
        if (fieldSeen) throw new HpackError('table size update after a field');
        const size = readInt(buf, r, end, 5);
        if (size > this.limit) throw new HpackError(`table size update to ${size}, above ${this.limit}`);
        this.table.resize(size);
        continue;
      } else {
        // Literal without indexing (0000) or never indexed (0001): same shape.
        this.literal(buf, r, end, 4);
        name = this.name;
        value = this.value;
      }
      fieldSeen = true;
      listSize += name.length + value.length + entryOverhead;
      if (listSize > maxListSize) throw new HeaderListTooLarge(`a header list of more than ${maxListSize} bytes`);
      out.push(name, value);
    }
    return out;
  }

  private lookup(index: number): Entry {
    if (index === 0) throw new HpackError('index 0');
    if (index <= staticCount) return staticTable[index - 1];
    const entry = this.table.get(index - staticCount - 1);
    if (entry === undefined) throw new HpackError(`index ${index} beyond the table`);
    return entry;
  }

  /** Reads a literal field into `name`, `value` and `fault`. */
  private literal(buf: Uint8Array, r: { at: number }, end: number, prefix: number): void {
    const index = readInt(buf, r, end, prefix);
    let name: string;
    let fault: string | undefined;
    if (index === 0) {
      name = readString(buf, r, end);
      fault = nameFault(name);
    } else {
      name = this.lookup(index)[0];
      // The static table's names are all well formed; a table entry's may not be.
      if (index > staticCount) fault = nameFault(name);
    }
    const value = readString(buf, r, end);
    fault ??= valueFault(name, value);
    if (fault !== undefined) this.malformed ??= fault;
    this.name = name;
    this.value = value;
    this.fault = fault;
  }
}

/**
 * Why a field name is not one HTTP/2 allows (RFC 9113, 8.2.1): none of 0x00-0x20, upper case, 0x7f-0xff, and a
 * colon only first (a pseudo-header). Undefined when it is fine.
 */
export function nameFault(name: string): string | undefined {
  if (name.length === 0) return 'an empty field name';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c <= 0x20 || (c >= 0x41 && c <= 0x5a) || c >= 0x7f || (c === 0x3a && i > 0))
      return `the field name ${JSON.stringify(name)} (a character HTTP/2 forbids in names)`;
  }
  return undefined;
}

/** Why a field value is not one HTTP/2 allows (RFC 9113, 8.2.1): no NUL, CR or LF, no whitespace first or last. */
export function valueFault(name: string, value: string): string | undefined {
  const n = value.length;
  if (n === 0) return undefined;
  let c = value.charCodeAt(0);
  const last = value.charCodeAt(n - 1);
  if (c === 0x20 || c === 0x09 || last === 0x20 || last === 0x09)
    return `the value of ${JSON.stringify(name)} (whitespace first or last)`;
  for (let i = 0; i < n; i++) {
    c = value.charCodeAt(i);
    if (c === 0x00 || c === 0x0a || c === 0x0d) return `the value of ${JSON.stringify(name)} (NUL, CR or LF in it)`;
  }
  return undefined;
}

function readInt(buf: Uint8Array, r: { at: number }, end: number, prefix: number): number {
  if (r.at >= end) throw new HpackError('truncated integer');
  const mask = (1 << prefix) - 1;
  let value = buf[r.at++] & mask;
  if (value < mask) return value;
  let shift = 0;
  for (;;) {
    if (r.at >= end) throw new HpackError('truncated integer');
    const b = buf[r.at++];
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
    if (shift > 28) throw new HpackError('integer too large');
  }
  return value;
}

function readString(buf: Uint8Array, r: { at: number }, end: number): string {
  if (r.at >= end) throw new HpackError('truncated string');
  const huffman = (buf[r.at] & 0x80) !== 0;
  const length = readInt(buf, r, end, 7);
  const from = r.at;
  const to = from + length;
  if (to > end) throw new HpackError('truncated string');
  r.at = to;
  if (!huffman) return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1', from, to);
  try {
    return huffmanDecode(buf, from, to);
  } catch (err) {
    throw new HpackError((err as Error).message);
  }
}

/** Writes an HPACK integer with `prefix` bits and the pattern `first` in the bits above them; returns the new offset. */
export function writeInt(out: Buffer, at: number, value: number, prefix: number, first: number): number {
  const mask = (1 << prefix) - 1;
  if (value < mask) {
    out[at++] = first | value;
    return at;
  }
  out[at++] = first | mask;
  value -= mask;
  while (value >= 0x80) {
    out[at++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  out[at++] = value;
  return at;
}

/** A literal string, not Huffman-coded. */
function writeString(out: Buffer, at: number, s: string): number {
  const length = Buffer.byteLength(s, 'latin1');
  at = writeInt(out, at, length, 7, 0);
  return at + out.write(s, at, length, 'latin1');
}

const staticIndex = new Map<string, number>();
const staticNameIndex = new Map<string, number>();
staticTable.forEach(([name, value], i) => {
  staticIndex.set(`${name}\0${value}`, i + 1);
  if (!staticNameIndex.has(name)) staticNameIndex.set(name, i + 1);
});

/**
 * Encodes request header blocks for one connection: a fixed part (method, scheme, authority and the caller's
 * headers), entered into the dynamic table at first use and referenced by index after, and the path, a literal
 * never indexed. The fixed part of a header list the caller reuses (the same array, holding the same fields) is
 * encoded once and kept.
 */
export class HpackEncoder {
  /** What this encoder has entered into the peer's table, newest first, mirroring its evictions. */
  private readonly mirror: DynamicTable;
  private keys: string[] = [];
  private max: number;
  /** A size update owed at the start of the next block (after the peer lowered the table size). */
  private pendingResize: number | undefined;
  /**
   * The smallest size since the last block, when below `pendingResize`: RFC 7541 4.2 wants it signalled first,
   * then the final one, so that the decoder evicts what the smaller one evicted.
   */
  private pendingMin: number | undefined;
  /** Bumped whenever the table changes (an insertion shifts every index): kept blocks are then stale. */
  private generation = 0;
  /**
   * Kept blocks by the caller's array, with a copy of what the array held: a caller may change its array between
   * requests (a token renewed in place), and a block is only reused for the same fields.
   */
  private readonly cache = new WeakMap<readonly string[], { generation: number; bytes: Buffer; fields: string[] }>();

  constructor(maxTableSize = 4096) {
    this.max = maxTableSize;
    this.mirror = new DynamicTable(maxTableSize);
  }

  /** The peer's SETTINGS_HEADER_TABLE_SIZE changed: the encoder may use at most that much (and at most 4096). */
  setMaxTableSize(size: number): void {
    const use = Math.min(size, 4096);
    if (use === this.max) return;
    if (use < (this.pendingMin ?? this.max)) this.pendingMin = use;
    this.max = use;
    this.mirror.resize(use);
    this.keys = this.keys.slice(0, this.mirror.length);
    this.generation++;
    this.pendingResize = use;
  }

  /**
   * The encoded fixed part for `fields` (pairs). When `fields` is an array the caller passes again, the bytes
   * are kept: once every field is in the table they are a few index bytes, encoded once.
   */
  fixed(fields: readonly string[]): Buffer {
    const hit = this.kept(fields);
    if (hit !== undefined) return hit;
    let size = this.pendingResize !== undefined ? 12 : 0;
    for (let i = 0; i < fields.length; i += 2) size += 12 + fields[i].length + fields[i + 1].length;
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    if (this.pendingResize !== undefined) {
      if (this.pendingMin !== undefined && this.pendingMin < this.pendingResize)
        at = writeInt(out, at, this.pendingMin, 5, 0x20);
      at = writeInt(out, at, this.pendingResize, 5, 0x20);
      this.pendingResize = undefined;
      this.pendingMin = undefined;
    }
    let inserted = false;
    for (let i = 0; i < fields.length; i += 2) {
      const name = fields[i];
      const value = fields[i + 1];
      const key = `${name}\0${value}`;
      const stat = staticIndex.get(key);
      const dyn = stat === undefined ? this.keys.indexOf(key) : -1;
      if (stat !== undefined) at = writeInt(out, at, stat, 7, 0x80);
      else if (dyn >= 0) at = writeInt(out, at, staticCount + 1 + dyn, 7, 0x80);
      else if (name.length + value.length + entryOverhead > this.max / 2) {
        // Too large to keep: it would push the others out.
        at = writeLiteral(out, at, name, value, 0x00, 4);
      } else {
        this.mirror.add(name, value);
        this.keys.unshift(key);
        this.keys.length = this.mirror.length;
        // Every index into the dynamic table moved by one: blocks kept with references are stale.
        this.generation++;
        inserted = true;
        at = writeLiteral(out, at, name, value, 0x40, 6);
      }
    }
    const bytes = out.subarray(0, at);
    // A block that inserted must not be sent twice: the second time the fields are references.
    if (!inserted) this.cache.set(fields, { generation: this.generation, bytes, fields: fields.slice() });
    return bytes;
  }

  /**
   * The block `fixed(fields)` would return without encoding anything (the same fields as when it was kept, the
   * table unchanged since), or undefined. Changes nothing: a caller can check fields it has not sent before.
   */
  kept(fields: readonly string[]): Buffer | undefined {
    if (this.pendingResize !== undefined) return undefined;
    const hit = this.cache.get(fields);
    if (hit === undefined || hit.generation !== this.generation) return undefined;
    const was = hit.fields;
    if (was.length !== fields.length) return undefined;
    for (let i = 0; i < was.length; i++) if (was[i] !== fields[i]) return undefined;
    return hit.bytes;
  }
}

/** Bytes `writeLiteralField` needs at most for a never-indexed literal of `name` and `value`. */
export function literalFieldSize(name: string, value: string): number {
  return 12 + name.length + Buffer.byteLength(value, 'latin1');
}

/** Writes `name: value` as a literal never indexed (the path: it changes with every request). */
export function writeLiteralField(out: Buffer, at: number, name: string, value: string): number {
  return writeLiteral(out, at, name, value, 0x10, 4);
}

function writeLiteral(out: Buffer, at: number, name: string, value: string, first: number, prefix: number): number {
  const nameIndex = staticNameIndex.get(name);
  if (nameIndex !== undefined) at = writeInt(out, at, nameIndex, prefix, first);
  else {
    out[at++] = first;
    at = writeString(out, at, name);
  }
  return writeString(out, at, value);
}
