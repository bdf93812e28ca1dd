import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { tempDir } from './helpers.js';
import { startRecordingServer } from '../http/recording-server.js';
import { cliArgs } from '../support/cli-entry.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(
  args: string[],
  opts: { cwd: string; stdin?: string; interruptWhen?: (stderr: string) => boolean },
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], { cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), 50_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      if (!interrupted && opts.interruptWhen?.(stderr)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(killer);
      done({ code, stdout, stderr });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

describe('vespa-bulk feed (CLI)', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('Ctrl-C stops with a checkpoint, and --resume completes the feed with nothing skipped', async () => {
    const server = await startDocumentServer({ port: 0, faults: { maxOpsPerSecond: 3000 } });
    cleanups.push(() => server.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const n = 12_000;
    writeFileSync(
      join(dir, 'in.jsonl'),
      Array.from({ length: n }, (_, i) => JSON.stringify({ put: `id:ns:music::c${i}`, fields: { i } })).join('\n'),
    );
    const first = await runCli(['feed', '-t', server.url, '--progress', '0.2', '--checkpoint', 'cp.json', 'in.jsonl'], {
      cwd: dir,
      // The progress line writes thousands with separators: 'ok 1,044'.
      interruptWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr),
    });
    expect(first.stderr).toMatch(/stopping/);
    // Stopped by Ctrl-C: 130, as shells expect.
    expect(first.code).toBe(130);
    // The last progress line says so, with no ETA left over from before the stop.
    const last =
      first.stderr
        .split('\n')
        .filter((l) => l.startsWith('feed '))
        .at(-1) ?? '';
    expect(last).toMatch(/^feed stopped /);
    expect(last).not.toContain('eta');
    const s1 = JSON.parse(first.stdout);
    expect(s1['feeder.ok.count']).toBeGreaterThan(0);
    expect(s1['feeder.ok.count']).toBeLessThan(n);
    const cp = JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8'));
    expect(cp.inputs).toEqual(['in.jsonl']);
    expect(cp.position.offset).toBeGreaterThan(0);
    expect(first.stderr).toContain('--resume cp.json');
    const afterFirst = server.store.size();

    const second = await runCli(['feed', '-t', server.url, '--quiet', '--resume', 'cp.json'], { cwd: dir });
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    const s2 = JSON.parse(second.stdout);
    // The whole feed's counts, and this run's beside: it fed what the first had not finished, nothing more.
    const passedOver = n - s2['feeder.run.operation.count'];
    expect(passedOver).toBeGreaterThan(0);
    expect(passedOver).toBeLessThanOrEqual(afterFirst);
    expect(s2['feeder.ok.count']).toBe(n);
    expect(s2['feeder.ok.count']).toBe(s1['feeder.ok.count'] + s2['feeder.run.ok.count']);
    expect(s2['feeder.skipped.count']).toBe(0);
    expect(server.store.size()).toBe(n);
    expect(JSON.parse(readFileSync(join(dir, 'cp.json'), 'utf8')).position).toBeNull();
  });

  it('reads stdin, names the default failure file, and exits 1 when something failed', async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const input = '{"put":"id:ns:music::s1","fields":{}}\n{"put":"id:ns:music::s2","fields":{},"oops":1}\n';
    const r = await runCli(['feed', '-t', server.url, '-q', '-'], { cwd: dir, stdin: input });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/-:2: put id:ns:music::s2: unknown key 'oops'/);
    const files = readdirSync(dir).filter((f) => f.startsWith('vespa-bulk-failures-') && !f.endsWith('.reasons.jsonl'));
    expect(files).toHaveLength(1);
    expect(r.stderr).toContain(files[0]);
    expect(readFileSync(join(dir, files[0]), 'utf8')).toBe('{"put":"id:ns:music::s2","fields":{},"oops":1}\n');
    expect(JSON.parse(readFileSync(join(dir, `${files[0]}.reasons.jsonl`), 'utf8'))).toMatchObject({
      line: 1,
      input: '-',
      inputLine: 2,
      code: 'VB_BAD_OPERATION',
    });
    expect(server.store.get('id:ns:music::s1')).toBeDefined();
  });

  it('exits 0 with no failure file when all succeeded, 2 on bad usage', async () => {
    const server = await startDocumentServer({ port: 0 });
    cleanups.push(() => server.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'ok.json'), '[{"put":"id:ns:music::o","fields":{"a":1}}]');
    const ok = await runCli(['feed', '-t', server.url, '-q', 'ok.json'], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)['feeder.ok.count']).toBe(1);
    expect(readdirSync(dir).some((f) => f.startsWith('vespa-bulk-failures-'))).toBe(false);
    const bad = await runCli(['feed', '--shard', '3/2', 'ok.json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--shard/);
    const missing = await runCli(['feed', 'nope.jsonl'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(existsSync(join(dir, 'nope.jsonl'))).toBe(false);
  });

  it('sends --token and --header on every request', async () => {
    const server = await startRecordingServer();
    cleanups.push(server.close);
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'in.jsonl'), '{"remove":"id:ns:music::t"}\n');
    const r = await runCli(
      ['feed', '-t', server.url, '-q', '--token', 'tok123', '--header', 'X-Extra: yes', 'in.jsonl'],
      { cwd: dir },
    );
    expect(r.code).toBe(0);
    expect(server.requests[0].headers.authorization).toBe('Bearer tok123');
    expect(server.requests[0].headers['x-extra']).toBe('yes');
  });

  it('says once which HTTP it speaks; --protocol h2 against an HTTP/1.1-only server is bad usage (exit 2), with nothing sent', async () => {
    const h2 = await startDocumentServer({ port: 0 });
    cleanups.push(() => h2.close());
    const h1 = await startRecordingServer();
    cleanups.push(() => h1.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    writeFileSync(
      join(dir, 'in.jsonl'),
      '{"put":"id:ns:music::p1","fields":{}}\n{"put":"id:ns:music::p2","fields":{}}\n',
    );

    const auto = await runCli(['feed', '-t', h2.url, 'in.jsonl'], { cwd: dir });
    expect(auto.code).toBe(0);
    expect(
      auto.stderr.match(/vespa-bulk: speaking HTTP\/2 to http:\/\/127\.0\.0\.1:\d+ \(--protocol auto\)/g),
    ).toHaveLength(1);
    expect(JSON.parse(auto.stdout)['http.protocol']).toBe('h2');

    const fallback = await runCli(['feed', '-t', h1.url, 'in.jsonl'], { cwd: dir });
    expect(fallback.code).toBe(0);
    expect(fallback.stderr).toMatch(/speaking HTTP\/1\.1 to .* \(--protocol auto\)/);
    expect(h1.requests).toHaveLength(2);

    const refused = await runCli(['feed', '-t', h1.url, '--http2', 'in.jsonl'], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /does not speak HTTP\/2 \(.*answered the HTTP\/2 preface with 'HTTP\/1\.1 400 Bad Request'\); use --protocol auto or --protocol http1\.1/,
    );
    expect(h1.requests).toHaveLength(2);

    const conflict = await runCli(['feed', '-t', h1.url, '--http2', '--protocol', 'http1.1', 'in.jsonl'], { cwd: dir });
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toMatch(/--http2 means --protocol h2, not --protocol http1\.1/);
  });
});
