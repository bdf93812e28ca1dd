import { createWriteStream, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';

/**
 * Spill files: one side's documents split by a hash of their id into `partitions` files, so that the two sides
 * can then be compared a partition at a time, with one partition of each in memory rather than a whole corpus.
 * A record is `[u32 id bytes][u32 fields bytes, or 0xffffffff for a remove][id][fields]`: the bytes as read,
 * never parsed here. Records keep their order within a partition, so a later put or remove of an id wins.
 */

const REMOVED = 0xffffffff;
/** Bytes gathered per partition before they are handed to its file. */
const bufferBytes = 16 * 1024;

/** FNV-1a over the id's UTF-16 code units: cheap and even; any stable hash does, the same on both sides. */
export function partitionOf(id: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

/** Writes one side's records into its partition files. */
export class SpillWriter {
  private readonly streams: WriteStream[];
  private readonly buffers: Buffer[];
  private readonly used: number[];
  private failure: Error | undefined;
  /** Records written, removes included. */
  records = 0;

  constructor(
    dir: string,
    readonly name: string,
    readonly partitions: number,
  ) {
    this.streams = Array.from({ length: partitions }, (_, p) => {
      const s = createWriteStream(partitionPath(dir, name, p));
      s.on('error', (err) => (this.failure ??= err));
      return s;
    });
    this.buffers = Array.from({ length: partitions }, () => Buffer.allocUnsafe(bufferBytes));
    this.used = new Array<number>(partitions).fill(0);
  }

  /** Adds a put (`fields` given) or a remove (`null`); resolves at once unless the partition's file lags behind. */
  async add(id: string, fields: Buffer | null): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    this.records++;
    const p = partitionOf(id, this.partitions);
    const idLength = Buffer.byteLength(id);
    const size = 8 + idLength + (fields?.length ?? 0);
    if (this.used[p] + size > bufferBytes) await this.flush(p);
    if (size > bufferBytes) {
      const record = Buffer.allocUnsafe(size);
      this.encode(record, 0, id, idLength, fields);
      await this.write(p, record);
      return;
    }
    this.used[p] = this.encode(this.buffers[p], this.used[p], id, idLength, fields);
  }

  private encode(target: Buffer, at: number, id: string, idLength: number, fields: Buffer | null): number {
    target.writeUInt32LE(idLength, at);
    target.writeUInt32LE(fields === null ? REMOVED : fields.length, at + 4);
    target.write(id, at + 8, 'utf8');
    if (fields !== null) fields.copy(target, at + 8 + idLength);
    return at + 8 + idLength + (fields?.length ?? 0);
  }

  private async flush(p: number): Promise<void> {
    if (this.used[p] === 0) return;
    const full = this.buffers[p].subarray(0, this.used[p]);
    this.buffers[p] = Buffer.allocUnsafe(bufferBytes);
    this.used[p] = 0;
    await this.write(p, full);
  }

  private async write(p: number, bytes: Buffer): Promise<void> {
    const stream = this.streams[p];
    if (!stream.write(bytes)) await once(stream, 'drain');
    if (this.failure !== undefined) throw this.failure;
  }

  /** Writes what is buffered and closes the files. */
  async close(): Promise<void> {
    for (let p = 0; p < this.partitions; p++) await this.flush(p);
    await Promise.all(this.streams.map((s) => new Promise<void>((resolve) => s.end(resolve))));
    if (this.failure !== undefined) throw this.failure;
  }

  /** Closes the files without caring about their content (the comparison was given up); resolves once they are closed. */
  async destroy(): Promise<void> {
    await Promise.all(
      this.streams.map(async (s) => {
        if (s.closed) return;
        const closed = once(s, 'close').catch(() => {});
        s.destroy();
        await closed;
      }),
    );
  }
}

export function partitionPath(dir: string, name: string, partition: number): string {
  return join(dir, `${name}-${String(partition).padStart(4, '0')}.spill`);
}

/** One partition of a side: each id's last put (a view into the file's bytes); removed ids are left out. */
export async function readPartition(dir: string, name: string, partition: number): Promise<Map<string, Buffer>> {
  const bytes = await readFile(partitionPath(dir, name, partition));
  const out = new Map<string, Buffer>();
  let at = 0;
  while (at + 8 <= bytes.length) {
    const idLength = bytes.readUInt32LE(at);
    const fieldsLength = bytes.readUInt32LE(at + 4);
    const id = bytes.toString('utf8', at + 8, at + 8 + idLength);
    at += 8 + idLength;
    if (fieldsLength === REMOVED) {
      out.delete(id);
      continue;
    }
    out.set(id, bytes.subarray(at, at + fieldsLength));
    at += fieldsLength;
  }
  return out;
}
