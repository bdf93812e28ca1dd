import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliArgs } from '../support/cli-entry.js';
import { runInProcess } from '../support/in-process-cli.js';
import { startConfigServer, type ConfigServer } from '../../src/simulator/config-server/config-server.js';
import { cleanupTrees, eventually, sampleAppDir, sampleFiles, withMusicField, writeTree } from './fixtures.js';

let server: ConfigServer;
let stateDir: string;

const cli = (...args: string[]) => runInProcess([...args, '--config-url', server.url]);

beforeEach(async () => {
  server = await startConfigServer({ port: 0, convergeDelayMs: 60, reindexDurationMs: 60 });
  stateDir = await writeTree({});
  process.env.VESPA_BULK_STATE_DIR = stateDir;
});
afterEach(async () => {
  delete process.env.VESPA_BULK_STATE_DIR;
  await server.close();
});
afterAll(cleanupTrees);

describe('vespa-bulk deploy', () => {
  it('deploys a directory, prints the actions and waits for convergence', async () => {
    const r = await cli('deploy', sampleAppDir, '--wait', '10');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Uploaded .*samples\/app to http:\/\/127\.0\.0\.1:\d+: session \d+/);
    expect(r.stderr).toContain('Config change actions: none');
    expect(r.stderr).toMatch(/Activated session (\d+): application default\.default\.default generation \1/);
    expect(r.stderr).toMatch(/Converged: all \d+ services run generation \d+/);
    // What a deploy did is prose for the person: stdout carries data or one JSON result only.
    expect(r.stdout).toBe('');
    const json = await cli('deploy', sampleAppDir, '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ activate: { 'session-id': expect.any(String) } });
  });

  it('shows refeed, reindex and restart actions and what to do about them', async () => {
    expect((await cli('deploy', sampleAppDir)).code).toBe(0);
    let files = withMusicField(sampleFiles(), 'year', 'field year type long { indexing: summary | attribute }');
    files = withMusicField(files, 'duration', 'field duration type int { indexing: summary | attribute | index }');
    files = withMusicField(files, 'popularity', 'field popularity type float { indexing: summary }');
    const changed = await writeTree(files);

    const refused = await cli('deploy', changed);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /vespa-bulk: prepare failed: 400 INVALID_APPLICATION_PACKAGE: Invalid application: field-type-change/,
    );

    const r = await cli('deploy', changed, '--ignore-validation-errors');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /refeed\s+music in 'content' \(field-type-change\): Field 'year' changed: data type: 'int' -> 'long'/,
    );
    expect(r.stderr).toMatch(/reindex\s+music in 'content' \(indexing-change\)/);
    expect(r.stderr).toMatch(/restart\s+content 'content' searchnode/);
    expect(r.stderr).toContain('To reindex: vespa-bulk deploy reindex --cluster content --document-type music');
    expect(r.stderr).toContain('To restart: vespa-bulk deploy restart --cluster-id content');
    expect(r.stderr).toMatch(/WARNING Ignoring validation error/);
  });

  it('--json prints the raw results, and the error body on failure', async () => {
    const r = await cli('deploy', sampleAppDir, '--json');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.activate.application.generation).toBe(Number(result.upload['session-id']));
    expect(result.prepare.configChangeActions).toEqual({ restart: [], refeed: [], reindex: [] });
    const failed = await cli('deploy', 'prepare', sampleAppDir, '--vespa-version', '1.2.3', '--json');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)['error-code']).toBe('UNKNOWN_VESPA_VERSION');
    expect(failed.stderr).toMatch(/prepare failed: 400 UNKNOWN_VESPA_VERSION/);
  });

  it('bad input is a local usage error (exit 2) before any request', async () => {
    const dir = await writeTree({ 'schemas/music.sd': 'schema music { document music {} }', 'file.txt': 'plain text' });
    for (const [path, message] of [
      [join(dir, 'missing'), /does not exist/],
      [dir, /has no services.xml/],
      [join(dir, 'file.txt'), /neither a directory nor a zip/],
    ] as const) {
      const r = await cli('deploy', path);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const speed = await cli('deploy', 'reindex', '--speed', '250');
    expect(speed.code).toBe(2);
    expect(speed.stderr).toMatch(/speed 250 is out of range/);
  });

  it('converge host:port --wait polls one service until it converges, and fails naming it when time runs out', async () => {
    expect((await cli('deploy', sampleAppDir)).code).toBe(0);
    const one = await cli('deploy', 'converge', 'localhost:8080', '--wait', '10');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^localhost:8080: generation (\d+) of \1, converged/);
    await server.close();
    server = await startConfigServer({ port: 0, convergeDelayMs: 60_000 });
    expect((await cli('deploy', sampleAppDir)).code).toBe(0);
    const slow = await cli('deploy', 'converge', 'localhost:8080', '--wait', '0.3');
    expect(slow.code).toBe(1);
    expect(slow.stderr).toMatch(/Waiting for localhost:8080: generation 0 of \d+/);
    expect(slow.stderr).toMatch(/converge failed: service localhost:8080 did not reach generation \d+ within/);
    const gone = await cli('deploy', 'converge', 'nowhere:1', '--wait', '5');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/converge failed: 410 NOT_FOUND/);
  });

  it('prepare remembers the session and activate uses it', async () => {
    const p = await cli('deploy', 'prepare', sampleAppDir);
    expect(p.code, p.stderr).toBe(0);
    const id = /Prepared session (\d+)/.exec(p.stderr)?.[1];
    expect(id).toBeDefined();
    const state = JSON.parse(await readFile(join(stateDir, 'deploy-session'), 'utf8'));
    expect(state).toMatchObject({ sessionId: id, tenant: 'default', configUrl: server.url });
    const a = await cli('activate', '--wait', '10');
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toContain(`Session ${id} for tenant 'default' activated.`);
    expect(a.stderr).toMatch(/Converged/);
    const again = await cli('deploy', 'activate', id!);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/activate failed: 409 ACTIVATION_CONFLICT/);
  });

  it('prepare of an uploaded session id, and activate without a remembered session', async () => {
    const none = await cli('deploy', 'activate');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no session id given and none remembered/);
    const missing = await cli('prepare', '4242');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/prepare failed: 404 NOT_FOUND: Session 4242/);
  });

  it('status, converge (all and one service), content ls/cat, restart, reindex, reindexing, delete', async () => {
    expect((await cli('deploy', sampleAppDir, '--wait', '10')).code).toBe(0);

    const status = await cli('deploy', 'status');
    expect(status.stdout).toMatch(/Application default\.default\.default: generation \d+, Vespa 8\.600\.35/);

    const converge = await cli('deploy', 'converge');
    expect(converge.stdout).toMatch(/^Converged: all services run generation \d+/);
    expect(converge.stdout).toMatch(/ok\s+localhost:8080\s+container\s+default/);
    expect((await cli('deploy', 'converge', 'localhost:19107')).stdout).toMatch(
      /localhost:19107: generation (\d+) of \1, converged/,
    );
    const gone = await cli('deploy', 'converge', 'nowhere:1');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/converge failed: 410 NOT_FOUND/);

    expect((await cli('deploy', 'content', 'ls')).stdout).toBe('schemas/\nservices.xml\n');
    expect((await cli('deploy', 'content', 'ls', '--recursive')).stdout).toBe(
      'schemas/\nschemas/music.sd\nschemas/product.sd\nschemas/user.sd\nservices.xml\n',
    );
    expect((await cli('deploy', 'content', 'cat', 'schemas/user.sd')).stdout).toBe(sampleFiles()['schemas/user.sd']);
    const lsFile = await cli('deploy', 'content', 'ls', 'services.xml');
    expect(lsFile.code).toBe(1);
    expect(lsFile.stderr).toMatch(/content ls failed: 404 NOT_FOUND: 'services.xml' is a file, not a directory/);
    const catDir = await cli('deploy', 'content', 'cat', 'schemas');
    expect(catDir.code).toBe(1);
    expect(catDir.stdout).toBe('');
    expect(catDir.stderr).toMatch(/content cat failed: 'schemas' is a directory; list it with content ls/);
    const climb = await cli('deploy', 'content', 'cat', '../x');
    expect(climb.code).toBe(2);

    expect((await cli('deploy', 'restart', '--cluster-type', 'content')).stderr).toBe('Restart: Success\n');
    const badRestart = await cli('deploy', 'restart', '--cluster-type', 'storage');
    expect(badRestart.code).toBe(1);
    expect(badRestart.stderr).toMatch(/restart failed: 400 BAD_REQUEST: Unknown clusterType 'storage'/);

    const reindex = await cli(
      'deploy',
      'reindex',
      '--cluster',
      'content',
      '--document-type',
      'music',
      '--cause',
      'test',
    );
    expect(reindex.code, reindex.stderr).toBe(0);
    expect(reindex.stderr).toMatch(/Reindexing document types \[music\] in 'content'/);
    const done = await eventually(async () => {
      const r = await cli('deploy', 'reindexing');
      return /content\/music: successful 100\.0%/.test(r.stdout) ? r.stdout : undefined;
    });
    expect(done).toMatch(/cause: test/);

    const del = await cli('deploy', 'delete-app');
    expect(del.stderr).toBe("Application 'default.default.default' deleted\n");
    const after = await cli('deploy', 'status');
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/status failed: 404 NOT_FOUND/);
  });
});

describe('vespa-bulk deploy as a process', () => {
  const run = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [...cliArgs(), ...args, '--config-url', server.url],
        { timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } },
        (error, stdout, stderr) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });

  it('--version (and -V) after deploy or prepare is the Vespa version to deploy, not the tool version', async () => {
    const r = await cli('deploy', sampleAppDir, '--version', '8.590.11');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Activated session \d+/);
    expect((await cli('deploy', 'status')).stdout).toMatch(/generation \d+, Vespa 8\.590\.11/);
    expect((await cli('prepare', sampleAppDir, '-V', '8.599.6')).code).toBe(0);
    expect((await cli('activate')).code).toBe(0);
    expect((await cli('deploy', 'status')).stdout).toMatch(/generation \d+, Vespa 8\.599\.6/);
    const bad = await cli('deploy', sampleAppDir, '--version');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--vespa-version \(--version, -V\) must be a Vespa version/);
  });

  it('--version before any command prints our own version, also run from another project', async () => {
    const own = JSON.parse(await readFile(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as {
      version: string;
    };
    // yargs' default reads the package.json above the node_modules folder holding yargs: a project's, once we are
    // installed into one (test/package/packed-install.test.ts covers that case).
    const elsewhere = await writeTree({ 'package.json': JSON.stringify({ name: 'some-project', version: '9.9.9' }) });
    const bin = fileURLToPath(new URL('../../bin/vespa-bulk.js', import.meta.url));
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [bin, '--version'], { cwd: elsewhere, timeout: 30_000 }, (e, out) =>
        e ? reject(e) : resolve(out),
      ),
    );
    expect(stdout.trim()).toBe(own.version);
  });

  it('exits 0 on success, 1 when the config server refuses, 2 on bad usage', async () => {
    const ok = await run('deploy', sampleAppDir);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toMatch(/Activated session/);
    const refused = await run('deploy', 'converge', 'nowhere:1');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/converge failed: 410/);
    const usage = await run('deploy', '/definitely/not/here');
    expect(usage.code).toBe(2);
  });
});
