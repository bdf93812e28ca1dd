import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { feed } from '../../src/feed/feeder.js';
import { tempDir } from './helpers.js';
import { cliArgs } from '../support/cli-entry.js';

function runCli(
  args: string[],
  cwd: string,
  stdin = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(killer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

describe('feed of tables from the CLI and over workers', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('maps the table flags: CSV on stdin, a template id, updates with create; a bad row is counted and exits 1', async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const input = 'sku,price\nA1,10\n,11\nB2,12\n';
    const r = await runCli(
      [
        'feed',
        '-t',
        server.url,
        '-q',
        '--input-format',
        'csv',
        '--id',
        'id:shop:product::{sku}',
        '--operation',
        'update',
        '--create',
        '--failures',
        'f.jsonl',
        '-',
      ],
      dir,
      input,
    );
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.stdout);
    expect(summary['feeder.ok.count']).toBe(2);
    expect(summary['feeder.error.count']).toBe(1);
    expect(r.stderr).toMatch(/-:3: column 'sku' of the id is empty/);
    expect(server.store.get('id:shop:product::B2')!.fields).toEqual({ price: '12' });
    expect(JSON.parse(readFileSync(join(dir, 'f.jsonl.reasons.jsonl'), 'utf8'))).toMatchObject({
      input: '-',
      inputLine: 3,
      code: 'VB_BAD_ROW',
    });
  });

  it('feeds a table over worker threads, each row once', async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'w.tsv'), `k\tv\n${Array.from({ length: 200 }, (_, i) => `k${i}\tv${i}`).join('\n')}\n`);
    const summary = await feed(join(dir, 'w.tsv'), {
      endpoint: server.url,
      workers: 2,
      failures: false,
      rows: { idField: 'k', documentType: 'doc' },
    });
    expect(summary.ok).toBe(200);
    expect(server.store.all()).toHaveLength(200);
    expect(server.store.get('id:doc:doc::k199')!.fields).toEqual({ v: 'v199' });
  });
});
