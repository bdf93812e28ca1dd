import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/simulator/faults.js';
import { directIoOption } from '../../src/cli/commands/visit.js';
import { fileSink } from '../../src/sinks/file.js';
import { stdoutSink } from '../../src/sinks/stream.js';
import { warningsDuring } from '../support/warnings.js';
import type { FileSink } from '../../src/sinks/sink.js';

const dir = mkdtempSync(join(tmpdir(), 'vb-sinks-'));
const shmDir = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/vb-sinks-') : undefined;
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (shmDir !== undefined) rmSync(shmDir, { recursive: true, force: true });
});

/** Whether this file system takes O_DIRECT at all; when it does, the direct path must stay direct. */
function directOpens(where: string): boolean {
  if (constants.O_DIRECT === undefined) return false;
  const path = join(where, 'probe');
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT));
    return true;
  } catch {
    return false;
  } finally {
    rmSync(path, { force: true });
  }
}

// Deterministic, so a failing pattern can be rerun.
const random = seededRandom;

function bytes(n: number, seed: number): Buffer {
  const next = random(seed);
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = (next() * 256) | 0;
  return out;
}

type Pattern = (next: () => number) => number[][];

/** Chunk sizes per write() call, for about `total` bytes. */
function batches(total: number, perBatch: number, size: (next: () => number) => number): Pattern {
  return (next) => {
    const out: number[][] = [];
    let sum = 0;
    while (sum < total) {
      const batch: number[] = [];
      for (let i = 0; i < perBatch && sum < total; i++) {
        const n = size(next);
        batch.push(n);
        sum += n;
      }
      out.push(batch);
    }
    return out;
  };
}

const edges = [0, 1, 511, 512, 4095, 4096, 4097, 8191, 12289, 65536, (1 << 20) - 1, 1 << 20, (1 << 20) + 1];
const patterns: Record<string, Pattern> = {
  'tiny chunks, many per write': batches(2.5 * 2 ** 20, 2000, (next) => 1 + Math.floor(next() * 7)),
  'sizes at block edges': batches(6 * 2 ** 20, 3, (next) => edges[Math.floor(next() * edges.length)]),
  'chunks over 1 MiB': batches(8 * 2 ** 20, 2, (next) =>
    next() < 0.5 ? 1 + Math.floor(next() * 100) : (1 << 20) + Math.floor(next() * 2 * 2 ** 20),
  ),
  'random sizes': batches(5 * 2 ** 20, 4, (next) => 1 + Math.floor(next() * 200_000)),
};

/**
 * Writes the pattern's chunks (cut from one random buffer), honouring back-pressure, calls flushed() after about
 * `flushes` random writes and checks that the file then holds exactly what was written; checks it again after
 * close. `prior` is what the file held before (append).
 */
async function exercise(
  sink: FileSink,
  path: string,
  pattern: Pattern,
  seed: number,
  prior: Buffer,
  flushes = 12,
): Promise<Buffer> {
  const next = random(seed);
  const plan = pattern(next);
  const total = plan.reduce((n, b) => n + b.reduce((m, x) => m + x, 0), 0);
  const data = bytes(total, seed + 1);
  const expected = Buffer.concat([prior, data]);
  let offset = 0;
  for (const batch of plan) {
    const chunks = batch.map((n) => {
      const c = data.subarray(offset, offset + n);
      offset += n;
      return c;
    });
    const pending = sink.write(chunks);
    if (pending !== undefined) await pending;
    if (next() < flushes / plan.length) {
      await sink.flushed();
      const onDisk = readFileSync(path);
      expect(onDisk.length).toBe(prior.length + offset);
      expect(onDisk.equals(expected.subarray(0, prior.length + offset))).toBe(true);
    }
  }
  await sink.close();
  expect(sink.bytes).toBe(total);
  const final = readFileSync(path);
  expect(final.length).toBe(expected.length);
  expect(final.equals(expected)).toBe(true);
  return expected;
}

const modes = [
  { name: 'direct', directIo: true },
  { name: 'forced buffered', directIo: false },
] as const;
const directHere = directOpens(dir);

describe.each(modes)('fileSink, $name', ({ directIo }) => {
  let seed = directIo ? 1000 : 2000;

  it.each(Object.keys(patterns))(
    'writes exactly what it is given, flushed at random points: %s',
    { timeout: 60_000 },
    async (name) => {
      const path = join(dir, `${directIo}-${name.replace(/\W+/g, '-')}.jsonl`);
      writeFileSync(path, 'old content, truncated');
      const sink = fileSink(path, { directIo });
      await exercise(sink, path, patterns[name], seed++, Buffer.alloc(0));
      expect(sink.directIo).toBe(directIo && directHere);
    },
  );

  it.each([0, 1, 100, 4095, 4096, 4097, 8192 + 17, (1 << 20) + 123, 1 << 21])(
    'appends to an existing file of %i bytes',
    { timeout: 60_000 },
    async (size) => {
      const path = join(dir, `${directIo}-append-${size}.jsonl`);
      const prior = bytes(size, size);
      writeFileSync(path, prior);
      const sink = fileSink(path, { append: true, directIo });
      await exercise(sink, path, patterns['random sizes'], seed++, prior, 6);
      // A second resume on top of the first.
      const afterFirst = readFileSync(path);
      const again = fileSink(path, { append: true, directIo });
      await exercise(
        again,
        path,
        batches(70_000, 3, (next) => 1 + Math.floor(next() * 9000)),
        seed++,
        afterFirst,
        4,
      );
    },
  );

  it('covers, in flushed(), every byte written before the call while writes go on', { timeout: 60_000 }, async () => {
    const path = join(dir, `${directIo}-concurrent.jsonl`);
    const sink = fileSink(path, { directIo });
    const data = bytes(3 * 2 ** 20 + 777, 7);
    const next = random(8);
    let offset = 0;
    const checks: Array<Promise<void>> = [];
    while (offset < data.length) {
      const n = Math.min(data.length - offset, 1 + Math.floor(next() * 60_000));
      const pending = sink.write([data.subarray(offset, offset + n)]);
      offset += n;
      if (next() < 0.2) {
        // Not awaited before the next write, as the checkpoint timer does it.
        const covered = offset;
        checks.push(
          sink.flushed().then(() => {
            const onDisk = readFileSync(path);
            expect(onDisk.length).toBeGreaterThanOrEqual(covered);
            expect(onDisk.subarray(0, covered).equals(data.subarray(0, covered))).toBe(true);
          }),
        );
      }
      if (pending !== undefined) await pending;
    }
    await Promise.all(checks);
    await sink.close();
    expect(readFileSync(path).equals(data)).toBe(true);
  });

  it('covers, in flushed(), a write still waiting for room (a checkpoint has counted its documents)', async () => {
    const path = join(dir, `${directIo}-waiting.jsonl`);
    const sink = fileSink(path, { directIo });
    const data = bytes(4 * 2 ** 20, 9);
    // Blocks of 256 KiB until one has to wait for room.
    let given = 0;
    let waiting: void | Promise<void> = undefined;
    while (waiting === undefined && given < data.length) {
      waiting = sink.write([data.subarray(given, given + 2 ** 18)]);
      given += 2 ** 18;
    }
    expect(waiting).toBeInstanceOf(Promise);
    await sink.flushed();
    expect(readFileSync(path).equals(data.subarray(0, given))).toBe(true);
    await waiting;
    await sink.close();
    expect(readFileSync(path).equals(data.subarray(0, given))).toBe(true);
  });

  it('writes an empty file when given nothing, and closes twice harmlessly', async () => {
    const path = join(dir, `${directIo}-empty.jsonl`);
    writeFileSync(path, 'previous export');
    const sink = fileSink(path, { directIo });
    await sink.flushed();
    await sink.close();
    await sink.close();
    expect(readFileSync(path).length).toBe(0);
    expect(() => sink.write([Buffer.from('late')])).toThrow();
  });
});

describe('fileSink, choice of writer', () => {
  it('takes VESPA_BULK_DIRECT_IO=0 as "no direct I/O"', async () => {
    const saved = process.env.VESPA_BULK_DIRECT_IO;
    try {
      process.env.VESPA_BULK_DIRECT_IO = '0';
      const off = fileSink(join(dir, 'env-off.jsonl'), directIoOption(undefined));
      expect(off.directIo).toBe(false);
      await off.close();
      process.env.VESPA_BULK_DIRECT_IO = '1';
      const on = fileSink(join(dir, 'env-on.jsonl'), directIoOption(undefined));
      expect(on.directIo).toBe(directHere);
      await on.close();
    } finally {
      if (saved === undefined) delete process.env.VESPA_BULK_DIRECT_IO;
      else process.env.VESPA_BULK_DIRECT_IO = saved;
    }
  });

  it('writes to a device (/dev/null) through the ordinary writer', async () => {
    const sink = fileSink('/dev/null', { directIo: true });
    expect(sink.directIo).toBe(false);
    await sink.write([Buffer.alloc(3 << 20, 1)]);
    await sink.flushed();
    await sink.close();
    expect(sink.bytes).toBe(3 << 20);
  });

  it('reports an open error (a directory) as the ordinary writer does', () => {
    expect(() => fileSink(dir, { directIo: true })).toThrow(/EISDIR/);
  });

  it('leaves .gz files to the compressor', async () => {
    const sink = fileSink(join(dir, 'x.jsonl.gz'), { directIo: true });
    expect(sink.directIo).toBe(false);
    await sink.close();
  });

  it.skipIf(shmDir === undefined)(
    'falls back or goes direct on tmpfs (/dev/shm), and writes exactly either way',
    { timeout: 60_000 },
    async () => {
      const path = join(shmDir!, 'out.jsonl');
      const sink = fileSink(path, { directIo: true });
      await exercise(sink, path, patterns['sizes at block edges'], 3000, Buffer.alloc(0));
      const prior = readFileSync(path);
      const again = fileSink(path, { append: true, directIo: true });
      await exercise(again, path, patterns['random sizes'], 3001, prior, 5);
    },
  );
});

describe('stdoutSink over a slow reader', () => {
  it('holds back any number of writers with one listener on the stream, and loses nothing', async () => {
    const received: Buffer[] = [];
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        received.push(chunk);
        setImmediate(done);
      },
    });
    const warnings = await warningsDuring(async () => {
      const sink = stdoutSink(slow);
      const writes = Array.from({ length: 40 }, (_, i) => sink.write([Buffer.from(`line ${i}\n`)]));
      // The first two lines (7 bytes each) fit in its 16 bytes; each write after them found it full, and all of
      // them wait on one 'drain'.
      expect(writes.filter((w) => w instanceof Promise)).toHaveLength(38);
      expect(slow.listenerCount('drain')).toBe(1);
      await Promise.all(writes.map(async (w) => w));
      await sink.close();
    });
    expect(Buffer.concat(received).toString()).toBe(Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(''));
    expect(slow.listenerCount('drain')).toBe(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it("rejects every waiting writer with the stream's error", async () => {
    const broken = new Writable({
      highWaterMark: 1,
      write(_chunk, _encoding, done) {
        setImmediate(() => done(new Error('EPIPE, say')));
      },
    });
    const sink = stdoutSink(broken);
    const writes = [sink.write([Buffer.from('a')]), sink.write([Buffer.from('b')])];
    for (const w of writes) await expect(w).rejects.toThrow('EPIPE, say');
  });
});
