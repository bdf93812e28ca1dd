import { Readable } from 'node:stream';
import { Random } from './random.js';

/** Operations per chunk handed to the feeder: large enough that the reader costs little per operation. */
const chunkOperations = 256;

/**
 * The operations of `vespa feed --speedtest BYTES`: puts to `id:test:test::<8 random letters>` with one field
 * `test` holding `bytes` random letters, as JSONL, until `durationSeconds` have passed since the stream was
 * first read. Meant to be fed with `dryRun: true`, which the service answers before it looks at the document
 * type, so it measures the network and the container's front, not the content nodes.
 * @example
 * ```ts
 * import { feed } from 'vespa-bulk';
 * import { speedtestSource } from 'vespa-bulk/bench';
 *
 * // What the client and the network carry, with documents of 1 KiB, for 30 seconds (`feed --speedtest`).
 * const summary = await feed(speedtestSource(1024, 30), { endpoint: 'http://127.0.0.1:8080' });
 * console.log(summary.okRate);
 * ```
 */
export function speedtestSource(bytes: number, durationSeconds: number, seed?: number): Readable {
  const random = new Random(seed);
  // The letters of each document are a window of a random text at a random offset: varied per document
  // (no compression or cache along the way sees the same body twice), at the cost of a slice, not of
  // `bytes` random draws per document.
  const text = random.letters(bytes + 65_536);
  let endAt = 0;
  function* chunks(): Generator<Buffer> {
    endAt = performance.now() + durationSeconds * 1000;
    while (performance.now() < endAt) {
      let lines = '';
      for (let i = 0; i < chunkOperations; i++) {
        const at = random.int(0, 65_536);
        lines += `{"put":"id:test:test::${random.letters(8)}","fields":{"test":"${text.slice(at, at + bytes)}"}}\n`;
      }
      yield Buffer.from(lines);
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}
