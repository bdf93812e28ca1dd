/**
 * An HPACK decoder (RFC 7541) for the fault front's raw HTTP/2 server (`fault-front.ts`): it reads whatever a
 * client's encoder sends (the dynamic table, size updates, Huffman strings), so the front does not depend on how
 * the client under test encodes its headers. Written apart from the client's own (src/http/h2/hpack.ts) on purpose:
 * a test peer that shared the client's code would share its mistakes. Decoding only; the front encodes its answers
 * as literals without indexing.
 */

// RFC 7541, Appendix A.
const staticTable: ReadonlyArray<readonly [string, string]> = [
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

// RFC 7541, Appendix B: the code length of each symbol (256 is EOS). The code is canonical, so the lengths make it.
// prettier-ignore
const codeLengths = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28,
  28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6,
  5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23,
  22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22,
  23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26,
  20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27,
  27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27,
  27, 27, 27, 26, 30,
];

/** A binary trie of the code: `next[node * 2 + bit]` is the child (0: none), `symbol[node]` a leaf's symbol (-1: inner). */
const trie = (() => {
  const next: number[] = [0, 0];
  const symbol: number[] = [-1];
  const order = codeLengths.map((_, s) => s).sort((a, b) => codeLengths[a] - codeLengths[b] || a - b);
  let code = 0;
  let length = codeLengths[order[0]];
  for (let k = 0; k < order.length; k++) {
    const s = order[k];
    if (k > 0) {
      code += 1;
      code *= 2 ** (codeLengths[s] - length);
      length = codeLengths[s];
    }
    let node = 0;
    for (let b = length - 1; b >= 0; b--) {
      const bit = Math.floor(code / 2 ** b) % 2;
      let child = next[node * 2 + bit];
      if (child === 0) {
        child = symbol.length;
        symbol.push(-1);
        next.push(0, 0);
        next[node * 2 + bit] = child;
      }
      node = child;
    }
    symbol[node] = s;
  }
  return { next, symbol };
})();

function huffmanDecode(buf: Buffer): string {
  const out: number[] = [];
  let node = 0;
  let depth = 0;
  for (const byte of buf) {
    for (let b = 7; b >= 0; b--) {
      node = trie.next[node * 2 + ((byte >> b) & 1)];
      depth++;
      if (node === 0) throw new Error('HPACK: invalid Huffman code');
      const s = trie.symbol[node];
      if (s >= 0) {
        if (s === 256) throw new Error('HPACK: EOS in a Huffman string');
        out.push(s);
        node = 0;
        depth = 0;
      }
    }
  }
  // Padding: fewer than 8 bits, all ones (the start of EOS).
  if (depth > 7) throw new Error('HPACK: Huffman padding longer than 7 bits');
  return Buffer.from(out).toString('latin1');
}

export class HpackDecoder {
  private dynamic: Array<[string, string]> = [];
  private size = 0;
  private maxSize = 4096;

  /** The fields of one header block, in order, as [name, value] pairs. */
  decode(block: Buffer): Array<[string, string]> {
    const fields: Array<[string, string]> = [];
    const at = { i: 0 };
    while (at.i < block.length) {
      const first = block[at.i];
      if (first & 0x80) {
        fields.push(this.entry(this.integer(block, at, 7)));
      } else if (first & 0x40) {
        const field = this.literal(block, at, 6);
        fields.push(field);
        this.add(field);
      } else if (first & 0x20) {
        this.maxSize = this.integer(block, at, 5);
        this.evict();
      } else {
        // Without indexing (0000) or never indexed (0001): the same to a decoder.
        fields.push(this.literal(block, at, 4));
      }
    }
    return fields;
  }

  private literal(block: Buffer, at: { i: number }, prefix: number): [string, string] {
    const index = this.integer(block, at, prefix);
    const name = index === 0 ? this.string(block, at) : this.entry(index)[0];
    return [name, this.string(block, at)];
  }

  private entry(index: number): [string, string] {
    if (index >= 1 && index <= staticTable.length) return [...staticTable[index - 1]] as [string, string];
    const e = this.dynamic[index - staticTable.length - 1];
    if (e === undefined) throw new Error(`HPACK: no table entry ${index}`);
    return e;
  }

  private add(field: [string, string]): void {
    this.dynamic.unshift(field);
    this.size += field[0].length + field[1].length + 32;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.maxSize && this.dynamic.length > 0) {
      const e = this.dynamic.pop()!;
      this.size -= e[0].length + e[1].length + 32;
    }
  }

  private integer(block: Buffer, at: { i: number }, prefix: number): number {
    const mask = (1 << prefix) - 1;
    let value = block[at.i++] & mask;
    if (value < mask) return value;
    let shift = 0;
    for (;;) {
      if (at.i >= block.length) throw new Error('HPACK: integer cut short');
      const b = block[at.i++];
      value += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return value;
    }
  }

  private string(block: Buffer, at: { i: number }): string {
    const huffman = (block[at.i] & 0x80) !== 0;
    const length = this.integer(block, at, 7);
    if (at.i + length > block.length) throw new Error('HPACK: string cut short');
    const raw = block.subarray(at.i, at.i + length);
    at.i += length;
    return huffman ? huffmanDecode(raw) : raw.toString('latin1');
  }
}

/** One header field as a literal without indexing, new name (RFC 7541, 6.2.2): what the front's answers are made of. */
export function literalField(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0]), hpackString(name), hpackString(value)]);
}

function hpackString(s: string): Buffer {
  const bytes = Buffer.from(s, 'latin1');
  const head: number[] = [];
  let n = bytes.length;
  if (n < 127) head.push(n);
  else {
    head.push(127);
    n -= 127;
    while (n >= 128) {
      head.push((n % 128) + 128);
      n = Math.floor(n / 128);
    }
    head.push(n);
  }
  return Buffer.concat([Buffer.from(head), bytes]);
}
