import { createWriteStream } from 'node:fs';
import { createGzip } from 'node:zlib';
import type { FileSink } from './sink.js';
import { StreamSink } from './stream.js';

/** A gzip-compressed file; appending (a resumed export) adds a new gzip member, which gzip readers accept. */
export function gzipFileSink(path: string, append: boolean): FileSink {
  const file = createWriteStream(path, { flags: append ? 'a' : 'w', highWaterMark: 1 << 20 });
  // Level 1: an export is usually limited by the compressor, and level 1 already shrinks JSON several times.
  const gzip = createGzip({ level: 1 });
  gzip.pipe(file);
  return new StreamSink(gzip, true, gzip, file);
}
