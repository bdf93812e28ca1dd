/**
 * The HPACK Huffman code (RFC 7541, Appendix B), decoding only: this client sends its header strings as plain
 * literals, but servers (Jetty among them) Huffman-encode theirs. Pure.
 *
 * The code is canonical: within one length the codes rise with the symbol, and the first code of a length is
 * the last code of the length before plus one, shifted. So the table is its 257 code lengths (symbol 256 is
 * EOS) and the codes are derived from them; `test/http/h2/huffman.test.ts` checks them against the RFC's
 * printed codes.
 */
// prettier-ignore
const lengths = [
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

const eos = 256;

/** Each symbol's code, right-aligned, in the canonical order the lengths imply. */
export const huffmanCodes: readonly { code: number; length: number }[] = (() => {
  const symbols = lengths.map((_, s) => s).sort((a, b) => lengths[a] - lengths[b] || a - b);
  const codes = new Array<{ code: number; length: number }>(lengths.length);
  let code = 0;
  let length = lengths[symbols[0]];
  symbols.forEach((s, i) => {
    if (i > 0) {
      code = (code + 1) * 2 ** (lengths[s] - length);
      length = lengths[s];
    }
    codes[s] = { code, length };
  });
  return codes;
})();

/**
 * A decoding tree flattened into arrays of 4-bit steps: node n, nibble v leads to `next[n*16+v]`; where a
 * symbol ends within the nibble, `emit` holds it (+1, 0 for none) and `next` the node to go on from. Four bits
 * at a time keeps the table small (about 256 nodes) and the loop short.
 */
const { next, emit, accepting } = (() => {
  // A plain binary tree first: children[2n], children[2n+1]; leaf symbol in leafSym.
  const children: number[] = [0, 0];
  const leafSym: number[] = [-1];
  const depth: number[] = [0];
  huffmanCodes.forEach(({ code, length }, sym) => {
    let node = 0;
    for (let bit = length - 1; bit >= 0; bit--) {
      const b = Math.floor(code / 2 ** bit) % 2;
      let child = children[2 * node + b];
      if (child === 0) {
        child = leafSym.length;
        leafSym.push(-1);
        depth.push(depth[node] + 1);
        children.push(0, 0);
        children[2 * node + b] = child;
      }
      node = child;
    }
    leafSym[node] = sym;
  });
  // States are the internal nodes; walking 4 bits from each gives the step table.
  const internal: number[] = [];
  const stateOf = new Map<number, number>();
  for (let n = 0; n < leafSym.length; n++) {
    if (leafSym[n] === -1) {
      stateOf.set(n, internal.length);
      internal.push(n);
    }
  }
  const nextT = new Int16Array(internal.length * 16);
  const emitT = new Int16Array(internal.length * 16);
  // A state is a valid place to end when the bits since the last symbol are all ones and fewer than 8 (padding).
  const acceptingT = new Uint8Array(internal.length);
  internal.forEach((start, state) => {
    let allOnes = 0;
    for (let i = 0; i < depth[start]; i++) allOnes = children[2 * allOnes + 1];
    acceptingT[state] = allOnes === start && depth[start] <= 7 ? 1 : 0;
    for (let v = 0; v < 16; v++) {
      let walk = start;
      let emitted = 0;
      let failed = false;
      for (let bit = 3; bit >= 0; bit--) {
        walk = children[2 * walk + ((v >> bit) & 1)];
        if (walk === 0) {
          failed = true;
          break;
        }
        if (leafSym[walk] !== -1) {
          if (leafSym[walk] === eos || emitted !== 0) {
            // EOS in the data, or two symbols in one nibble (impossible: codes are 5 bits or more).
            failed = true;
            break;
          }
          emitted = leafSym[walk] + 1;
          walk = 0;
        }
      }
      nextT[state * 16 + v] = failed ? -1 : stateOf.get(walk)!;
      emitT[state * 16 + v] = failed ? -1 : emitted;
    }
  });
  return { next: nextT, emit: emitT, accepting: acceptingT };
})();

/** Decodes `buf[start, end)` into a latin1 string, or throws a `RangeError` for a malformed encoding. */
export function huffmanDecode(buf: Uint8Array, start: number, end: number): string {
  const out = Buffer.allocUnsafe(Math.ceil(((end - start) * 8) / 5));
  let n = 0;
  let state = 0;
  for (let i = start; i < end; i++) {
    const byte = buf[i];
    let at = state * 16 + (byte >> 4);
    let sym = emit[at];
    if (sym < 0) throw new RangeError('invalid Huffman code');
    if (sym > 0) out[n++] = sym - 1;
    state = next[at];
    at = state * 16 + (byte & 15);
    sym = emit[at];
    if (sym < 0) throw new RangeError('invalid Huffman code');
    if (sym > 0) out[n++] = sym - 1;
    state = next[at];
  }
  if (accepting[state] !== 1) throw new RangeError('invalid Huffman padding');
  return out.toString('latin1', 0, n);
}
