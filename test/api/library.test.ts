import { afterEach, describe, expect, it } from 'vitest';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DocumentClient,
  Feeder,
  bulkOperation,
  deploy,
  exportDocuments,
  feed,
  isVespaBulkError,
  migrate,
  visit,
  waitForConvergence,
} from '../../src/index.js';
import { startDocumentServer } from '../../src/simulator/index.js';
import { startRecordingServer } from '../http/recording-server.js';
import { runCli } from '../faults/harness.js';
import { tempDir } from '../support/temp-dir.js';

/** An input with one unreadable line (a failure) and puts that a server demanding a token refuses (a stop). */
function failingInput(dir: string): string {
  const file = join(dir, 'in.jsonl');
  const lines = [
    '{"put":"id:ns:music::a","fields":{"n":1}}',
    '{not json',
    ...Array.from({ length: 50 }, (_, i) => JSON.stringify({ put: `id:ns:music::p${i}`, fields: { i } })),
  ];
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function usageError(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (err) {
    if (isVespaBulkError(err, 'VB_USAGE')) return err.message;
    throw err;
  }
  throw new Error('expected a VB_USAGE error');
}

describe('the library writes no file it was not asked for', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a feed with failures and a stop leaves the working directory empty; the CLI still writes its defaults there', async () => {
    const server = await startDocumentServer({ port: 0, token: 'right' });
    cleanups.push(() => server.close());
    const input = tempDir();
    cleanups.push(input.cleanup);
    const file = failingInput(input.dir);

    const cwd = tempDir();
    cleanups.push(cwd.cleanup);
    const before = process.cwd();
    process.chdir(cwd.dir);
    try {
      const outcome = await new Feeder({ endpoint: server.url }).run(file);
      expect(outcome.stopped).toBe('unauthorized');
      expect(outcome.summary.errors).toBeGreaterThanOrEqual(1);
      expect(outcome.failuresFile).toBeUndefined();
      expect(outcome.checkpointFile).toBeUndefined();
      const summary = await feed([file], { endpoint: server.url });
      expect(summary.errors).toBeGreaterThanOrEqual(1);
    } finally {
      process.chdir(before);
    }
    expect(readdirSync(cwd.dir)).toEqual([]);

    const cli = tempDir();
    cleanups.push(cli.cleanup);
    const run = await runCli(['feed', '-t', server.url, '-q', file], { cwd: cli.dir });
    expect(run.code).toBe(1);
    const written = readdirSync(cli.dir).sort();
    expect(written.some((f) => /^vespa-bulk-checkpoint-.*\.json$/.test(f))).toBe(true);
    expect(written.some((f) => /^vespa-bulk-failures-.*\.jsonl$/.test(f))).toBe(true);
    expect(written.some((f) => /^vespa-bulk-failures-.*\.jsonl\.reasons\.jsonl$/.test(f))).toBe(true);
  });
});

describe('options are checked by the library, naming the option', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('refuses bad values of every feature with VB_USAGE before sending anything', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    const endpoint = server.url;
    const ops = [{ put: 'id:ns:music::a', fields: {} }];
    const cases: Array<[() => unknown, RegExp]> = [
      // This one used to hang forever.
      [() => feed(ops, { endpoint, inflight: 0 }), /^inflight must be an integer >= 1, not 0$/],
      [() => feed(ops, { endpoint, connections: 2.5 }), /^connections must be an integer >= 1, not 2.5$/],
      [() => feed(ops, { endpoint, pipelining: Number.NaN }), /^pipelining must be/],
      [() => feed(ops, { endpoint, deadlineMs: 0 }), /^deadlineMs must be a finite number > 0/],
      [
        () => feed(ops, { endpoint, maxFailureSeconds: Number.POSITIVE_INFINITY }),
        /^maxFailureSeconds must be a finite number >= 0/,
      ],
      [() => feed(ops, { endpoint, tracelevel: 10 }), /^tracelevel must be an integer from 0 to 9, not 10$/],
      [
        () => feed(ops, { endpoint, compression: 'zstd' as never }),
        /^compression must be one of 'auto', 'gzip', 'none', not 'zstd'$/,
      ],
      [() => feed(ops, { endpoint, inflight: 8, maxInflight: 16 }), /^give inflight or maxInflight, not both$/],
      [() => feed(ops, { endpoint, maxRetries: -1 }), /^maxRetries must be an integer >= 0/],
      [() => feed(ops, { endpoint, shard: { index: 2, count: 2 } }), /^shard must be/],
      [() => feed(ops, { endpoint: 'localhost:8080' }), /^endpoint must be an http:\/\/ or https:\/\/ URL/],
      [() => feed(ops, { endpoint, failures: '' }), /^failures must be a non-empty string/],
      [() => new DocumentClient({ endpoint, connections: 0 }), /^connections must be an integer >= 1/],
      [() => new DocumentClient({ endpoint, deadlineMs: -1 }), /^deadlineMs must be a finite number > 0/],
      [() => visit({ endpoint, slices: 0 })[Symbol.asyncIterator]().next(), /^slices must be an integer >= 1, not 0$/],
      [
        () =>
          visit({ endpoint, slices: 2, sliceIds: [2] })
            [Symbol.asyncIterator]()
            .next(),
        /^sliceIds must be integers from 0 to 1, not 2$/,
      ],
      [
        () => visit({ endpoint, concurrency: 0 })[Symbol.asyncIterator]().next(),
        /^concurrency must be an integer from 1 to 1024/,
      ],
      [
        () => visit({ endpoint, bucketSpace: 'other' })[Symbol.asyncIterator]().next(),
        /^bucketSpace must be one of 'default', 'global'/,
      ],
      [() => exportDocuments({ endpoint, format: 'xml' as never }), /^format must be one of 'jsonl', 'feed', 'json'/],
      [
        () => exportDocuments({ endpoint, output: 'a.jsonl', outputDir: 'out' }),
        /^give output or outputDir, not both$/,
      ],
      [
        () => bulkOperation({ endpoint, kind: 'delete-where', selection: 'true', timeChunk: '5' }),
        /^timeChunk must be a number with unit s or ms/,
      ],
      [() => bulkOperation({ endpoint, kind: 'purge' as never, selection: 'true' }), /^kind must be one of/],
      [() => migrate({ endpoint, destination: 'nowhere' }), /^destination must be an http:\/\/ or https:\/\/ URL/],
      [
        () => migrate({ endpoint, destination: endpoint, feed: { pipelining: 0 } }),
        /^pipelining must be an integer >= 1/,
      ],
      [
        () => deploy({ configUrl: endpoint }, '/nonexistent', { waitSeconds: -1 }),
        /^waitSeconds must be a finite number >= 0/,
      ],
      [
        () => waitForConvergence({ configUrl: endpoint }, { timeoutMs: 1000, pollIntervalMs: 0 }),
        /^pollIntervalMs must be a finite number > 0/,
      ],
    ];
    for (const [call, expected] of cases) expect(await usageError(call)).toMatch(expected);
    expect(server.requests).toHaveLength(0);
  });

  it('accepts the edge values that mean something, and ignores names it does not know', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    const options = {
      endpoint: server.url,
      maxRetries: 0,
      tracelevel: 0,
      maxFailureSeconds: 0,
      inflight: 1,
      failures: false as const,
      somethingElse: 1,
    };
    const summary = await feed([{ put: 'id:ns:music::a', fields: {} }], options);
    expect(summary.ok).toBe(1);
  });

  it('the CLI reports the same checks by flag name, exit code 2', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'in.jsonl'), '{"remove":"id:ns:music::a"}\n');
    const cases: Array<[string[], RegExp]> = [
      [['feed', '--inflight', '0', 'in.jsonl'], /vespa-bulk: --inflight must be an integer >= 1\n/],
      [['feed', '--timeout', '0', 'in.jsonl'], /vespa-bulk: --timeout must be a finite number > 0\n/],
      [['feed', '--trace', '12', 'in.jsonl'], /vespa-bulk: --trace must be an integer from 0 to 9\n/],
      [['visit', '--slices', '2', '--slice-id', '3'], /vespa-bulk: --slice-id must be integers from 0 to 1\n/],
    ];
    for (const [args, expected] of cases) {
      const run = await runCli(args, { cwd: dir });
      expect(run.stderr).toMatch(expected);
      expect(run.code).toBe(2);
    }
  });
});
