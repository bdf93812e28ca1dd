import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feed } from '../../src/feed/feeder.js';
import { DocumentClient } from '../../src/http/document-client.js';
import { runCommand } from '../support/run-command.js';
import { useFeedFixtures } from './helpers.js';

/**
 * Feed input read as the official Go client reads it (client/go/internal/vespa/document/document.go), and the
 * container's request size limit (DocumentV1ApiHandler's 413) applied before sending. Over loopback HTTP against
 * the simulator.
 */

function reasonsOf(failures: string): Array<Record<string, unknown>> {
  return readFileSync(`${failures}.reasons.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('ids with n= as the Go client reads them', () => {
  const { server, dir } = useFeedFixtures();

  it('feeds n=+5 to /number/5/; a negative n fails alone with its reason, the feed goes on and counts it failed', async () => {
    const s = await server();
    const d = dir();
    const input = join(d, 'in.jsonl');
    const failures = join(d, 'failed.jsonl');
    writeFileSync(
      input,
      [
        '{"put":"id:ns:music:n=+5:plus","fields":{"a":1}}',
        '{"put":"id:ns:music:n=-1:minus","fields":{"a":2}}',
        '{"put":"id:ns:music:n=9223372036854775808:over","fields":{"a":3}}',
        '{"put":"id:ns:music:n=7:after","fields":{"a":4}}',
        '',
      ].join('\n'),
    );
    const summary = await feed(input, { endpoint: s.url, failures });
    expect(summary.ok).toBe(2);
    expect(summary.errors).toBe(2);
    // The service makes the id from the path's number: n=5.
    expect(s.store.get('id:ns:music:n=5:plus')).toBeDefined();
    expect(s.store.get('id:ns:music:n=7:after')).toBeDefined();
    expect(readFileSync(failures, 'utf8')).toBe(
      '{"put":"id:ns:music:n=-1:minus","fields":{"a":2}}\n{"put":"id:ns:music:n=9223372036854775808:over","fields":{"a":3}}\n',
    );
    expect(reasonsOf(failures)).toEqual([
      {
        line: 1,
        input,
        inputLine: 2,
        id: 'id:ns:music:n=-1:minus',
        operation: 'put',
        message:
          "invalid document id 'id:ns:music:n=-1:minus': 'n=-1' is negative: /document/v1 reads the path's number as unsigned, so no client can write a document with a negative 'n'",
        attempts: 0,
        code: 'VB_BAD_DOCUMENT_ID',
      },
      {
        line: 2,
        input,
        inputLine: 3,
        id: 'id:ns:music:n=9223372036854775808:over',
        operation: 'put',
        message:
          "invalid document id 'id:ns:music:n=9223372036854775808:over': 'n=9223372036854775808' is outside the signed 64-bit range [-9223372036854775808, 9223372036854775807]",
        attempts: 0,
        code: 'VB_BAD_DOCUMENT_ID',
      },
    ]);
  });
});

describe('a JSON array with a trailing comma', () => {
  const { server, dir } = useFeedFixtures();

  it("feeds the operations before it, then fails at the comma's file and line, exit 1", async () => {
    const s = await server();
    const d = dir();
    const input = join(d, 'in.json');
    const failures = join(d, 'failed.jsonl');
    writeFileSync(
      input,
      '[\n  {"put":"id:ns:music::one","fields":{}},\n  {"put":"id:ns:music::two","fields":{}},\n]\n',
    );
    const run = await runCommand(['feed', '-t', s.url, '-q', '--failures', failures, input]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${input}:3: invalid JSON: trailing comma before the array's closing ']'`);
    expect(s.store.get('id:ns:music::one')).toBeDefined();
    expect(s.store.get('id:ns:music::two')).toBeDefined();
    const summary = JSON.parse(run.stdout) as Record<string, number>;
    expect(summary['feeder.ok.count']).toBe(2);
    expect(summary['feeder.error.count']).toBe(1);
    expect(reasonsOf(failures)).toEqual([
      {
        line: 1,
        input,
        inputLine: 3,
        message: "invalid JSON: trailing comma before the array's closing ']'",
        attempts: 0,
        code: 'VB_BAD_JSON',
      },
    ]);
  });
});

describe('the request size limit', () => {
  const { server, dir } = useFeedFixtures();
  const big = `{"put":"id:ns:music::big","fields":{"text":"${'x'.repeat(200)}"}}`;
  const small = '{"put":"id:ns:music::small","fields":{"text":"x"}}';
  // {"fields":{"text":"<200 x>"}}: 10 + 211 + 1 bytes.
  const bigBody = 222;

  it('refuses an operation over maxRequestBytes before sending, naming the limit; the others are fed', async () => {
    const s = await server();
    const d = dir();
    const input = join(d, 'in.jsonl');
    const failures = join(d, 'failed.jsonl');
    writeFileSync(input, `${small}\n${big}\n`);
    const summary = await feed(input, { endpoint: s.url, failures, maxRequestBytes: 100 });
    expect(summary.ok).toBe(1);
    expect(summary.errors).toBe(1);
    // Not sent: one request, for the small one.
    expect(summary.requests).toBe(1);
    expect(s.store.get('id:ns:music::big')).toBeUndefined();
    expect(readFileSync(failures, 'utf8')).toBe(`${big}\n`);
    expect(reasonsOf(failures)).toEqual([
      {
        line: 1,
        input,
        inputLine: 2,
        id: 'id:ns:music::big',
        operation: 'put',
        message: `Document operation request size ${bigBody} bytes exceeds maximum size of 100 bytes (maxRequestBytes; the container's maxDocumentOperationRequestSizeMib): not sent`,
        attempts: 0,
        code: 'VB_REQUEST_TOO_LARGE',
      },
    ]);
    // At the limit exactly, it goes.
    const again = await feed(input, { endpoint: s.url, failures: join(d, 'none.jsonl'), maxRequestBytes: bigBody });
    expect(again.errors).toBe(0);
    expect(existsSync(join(d, 'none.jsonl'))).toBe(false);
  });

  it('is a flag on the command line (exit 1), a checked option (VB_USAGE), and applies to DocumentClient too', async () => {
    const s = await server();
    const d = dir();
    const input = join(d, 'in.jsonl');
    const failures = join(d, 'failed.jsonl');
    writeFileSync(input, `${big}\n`);
    const run = await runCommand([
      'feed',
      '-t',
      s.url,
      '-q',
      '--max-request-bytes',
      '100',
      '--failures',
      failures,
      input,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${input}:1: put id:ns:music::big: Document operation request size ${bigBody} bytes exceeds maximum size of 100 bytes`,
    );
    expect(reasonsOf(failures)[0]).toMatchObject({ code: 'VB_REQUEST_TOO_LARGE', inputLine: 1 });

    await expect(feed(input, { endpoint: s.url, maxRequestBytes: 0 })).rejects.toMatchObject({
      code: 'VB_USAGE',
      message: 'maxRequestBytes must be an integer >= 1, not 0',
    });

    const client = new DocumentClient({ endpoint: s.url, maxRequestBytes: 100 });
    try {
      await expect(client.put('id:ns:music::big', { text: 'x'.repeat(200) })).rejects.toMatchObject({
        code: 'VB_REQUEST_TOO_LARGE',
        message: `Document operation request size ${bigBody} bytes exceeds maximum size of 100 bytes (maxRequestBytes; the container's maxDocumentOperationRequestSizeMib): not sent`,
        place: { documentId: 'id:ns:music::big' },
      });
      expect((await client.put('id:ns:music::small', { text: 'x' })).status).toBe(200);
    } finally {
      await client.close();
    }
    expect(s.store.get('id:ns:music::big')).toBeUndefined();
  });
});
