import { Transform, type TransformCallback } from 'node:stream';
import * as zlib from 'node:zlib';
import { createRequire } from 'node:module';
import type { Decompress } from 'fzstd';

const require = createRequire(import.meta.url);

/**
 * A stream that decompresses zstd: Node's own (`zlib.createZstdDecompress`, from Node 22.15) where this Node
 * has it, else fzstd's streaming decoder (pure JavaScript, about 3-4x slower than the native one, still far above
 * what a feed sends), loaded only then.
 */
export function createZstdDecompress(chunkBytes: number): Transform {
  const native = (zlib as { createZstdDecompress?: (o?: { chunkSize?: number }) => Transform }).createZstdDecompress;
  if (typeof native === 'function') return native({ chunkSize: chunkBytes });
  return new FzstdTransform();
}

class FzstdTransform extends Transform {
  private readonly decoder: Decompress = new (require('fzstd') as typeof import('fzstd')).Decompress((data) => {
    // Copied: a block may be a view of the decoder's window, which the next block overwrites.
    if (data.length > 0) this.push(Buffer.from(data));
  });

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.decoder.push(chunk);
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      this.decoder.push(new Uint8Array(0), true);
      done();
    } catch (err) {
      done(err as Error);
    }
  }
}
