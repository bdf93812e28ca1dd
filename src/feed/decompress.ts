import { PassThrough, Transform, type Readable } from 'node:stream';
import { VespaBulkError } from '../core/errors.js';
import { createGunzip } from 'node:zlib';
import { createZstdDecompress } from './zstd.js';

/**
 * Decompression of feed input (files and URLs), and whether the compressed data broke off: an error the decoder
 * raises, as against one of the bytes' own source (a read error, a cut connection), which it passes on. A feed
 * reads up to such a break and records the break as one failure (`OperationSplitter.breakOff`).
 */

export type Codec = 'gzip' | 'zstd';

/** The decompressed streams whose data broke off, and the reason their decoder gave. */
const breaks = new WeakMap<object, string>();

/**
 * `raw` decompressed with `codec`. When the compressed data breaks off, the stream ends there (after everything
 * decoded before the break, which a stream destroyed by its error would drop unread) and `inputBreak` says why.
 */
export function decompress(raw: Readable, codec: Codec, chunkBytes: number): Readable {
  const gunzip = codec === 'gzip' ? createGunzip({ chunkSize: chunkBytes }) : undefined;
  const decoder = gunzip ?? createZstdDecompress(chunkBytes);
  const out = new PassThrough();
  // The reader stopping early (a stopped feed) or the data breaking off ends the reading of the source too.
  out.on('close', () => {
    decoder.destroy();
    raw.destroy();
  });
  let passedOn: unknown;
  raw.on('error', (err) => {
    passedOn = err;
    decoder.destroy(err);
  });
  decoder.on('error', (err) => {
    if (err === passedOn) {
      out.destroy(err);
      return;
    }
    breaks.set(out, reasonOf(codec, err));
    // A destroyed stream still gives what it holds to read().
    for (let chunk: unknown; (chunk = decoder.read()) !== null; ) out.write(chunk);
    out.end();
  });
  // zlib drops what its last call decoded when that call fails ('unexpected end of file'), up to a chunk of output:
  // a flush first takes out everything before the break, and the end then only finds the break. (fzstd hands over
  // each block as it completes; Node's own zstd, from 22.15, is left as it is.)
  raw.pipe(decoder, { end: false });
  raw.on('end', () => (gunzip !== undefined ? gunzip.flush(() => gunzip.end()) : decoder.end()));
  return decoder.pipe(out);
}

/** Why `stream` (of `decompress`) ended early: its compressed data broke off there; undefined when it did not. */
export function inputBreak(stream: Readable): string | undefined {
  return breaks.get(stream);
}

/**
 * `stream` for a reader that would take a break for the end of its input (a table's last row, cut short, would
 * look whole): a break becomes an error at the end, VB_BROKEN_INPUT naming `name`, which `brokenInput` finds.
 */
export function breakAsError(stream: Readable, name: string): Readable {
  const out = new Transform({
    transform: (chunk, _encoding, done) => done(null, chunk),
    flush: (done) => {
      const reason = inputBreak(stream);
      done(reason === undefined ? null : new VespaBulkError('VB_BROKEN_INPUT', reason, { place: { file: name } }));
    },
  });
  stream.on('error', (err) => out.destroy(err));
  return stream.pipe(out);
}

/** The VB_BROKEN_INPUT error that `err` is or was caused by (a reader may wrap it), else undefined. */
export function brokenInput(err: unknown): VespaBulkError | undefined {
  for (let e = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    if (e instanceof VespaBulkError && e.code === 'VB_BROKEN_INPUT') return e;
  }
  return undefined;
}

function reasonOf(codec: Codec, err: Error): string {
  // zlib: 'unexpected end of file'; fzstd: 'unexpected EOF'. Corrupt data can end a stream early too.
  return /unexpected end|\bEOF\b|truncated/i.test(err.message)
    ? `unexpected end of ${codec} data (the input is cut short or corrupt)`
    : `corrupt ${codec} data: ${err.message}`;
}
