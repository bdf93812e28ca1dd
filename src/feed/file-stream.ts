import { close, open, read } from 'node:fs';
import { Readable } from 'node:stream';

/**
 * A file's bytes as a Readable of `chunkBytes` chunks, each a Buffer of its own: operations are views into the
 * chunk they were read in (source.ts), so no two chunks may share memory.
 *
 * Not `fs.createReadStream`: its module loads fs/promises, readline and the file watchers with it, and that was
 * a twentieth of a one-document feed's CPU in the single executable (benchmarks/startup/run.ts). This is the
 * part of it a feed uses: open, read in order, close. A file that cannot be opened or read is the stream's
 * error, fs's own (ENOENT, EISDIR...), as createReadStream gives it.
 */
export function fileStream(path: string, chunkBytes: number): Readable {
  let fd: number | undefined;
  return new Readable({
    highWaterMark: chunkBytes,
    construct(done) {
      open(path, 'r', (err, opened) => {
        fd = opened;
        done(err);
      });
    },
    read(this: Readable) {
      const chunk = Buffer.allocUnsafeSlow(chunkBytes);
      read(fd!, chunk, 0, chunkBytes, null, (err, n) => {
        if (err) this.destroy(err);
        else if (n === 0) this.push(null);
        else this.push(n < chunkBytes ? chunk.subarray(0, n) : chunk);
      });
    },
    destroy(err, done) {
      if (fd === undefined) return done(err);
      const closing = fd;
      fd = undefined;
      close(closing, (closeErr) => done(err ?? closeErr));
    },
  });
}
