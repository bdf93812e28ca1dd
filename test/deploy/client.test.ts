import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTar } from 'nanotar';
import { gzipSync } from 'fflate';
import { startConfigServer, type ConfigServer } from '../../src/simulator/config-server/config-server.js';
import { activateSession, prepareAndActivate, prepareSession, uploadPackage } from '../../src/deploy/session.js';
import {
  deleteApplication,
  getApplication,
  getReindexing,
  listContent,
  readContent,
  restartServices,
  triggerReindex,
} from '../../src/deploy/application.js';
import { deploy } from '../../src/deploy/deploy.js';
import { DeployError } from '../../src/deploy/config-request.js';
import { getConvergence, getServiceConvergence, waitForConvergence } from '../../src/deploy/converge.js';
import { readPackage } from '../../src/deploy/package.js';
import { recallSession, rememberSession } from '../../src/deploy/session-state.js';
import { formatChangeActions } from '../../src/cli/deploy-format.js';
import { isVespaBulkError } from '../../src/core/errors.js';
import {
  cleanupTrees,
  eventually,
  sampleAppDir,
  sampleFiles,
  withMusicField,
  writeTree,
  zipFiles,
} from './fixtures.js';

afterAll(cleanupTrees);

let server: ConfigServer;
const target = () => ({ configUrl: server.url });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('deploy library against the simulator', () => {
  beforeEach(async () => {
    server = await startConfigServer({ port: 0, convergeDelayMs: 60, reindexDurationMs: 60 });
  });
  afterEach(() => server.close());

  it('deploys a directory in three steps and waits for convergence', async () => {
    const steps: string[] = [];
    const result = await deploy(target(), sampleAppDir, { waitSeconds: 10, onStep: (s) => steps.push(s) });
    expect(steps).toEqual(['upload', 'prepare', 'activate']);
    expect(result.package).toEqual({
      source: 'directory',
      files: ['schemas/music.sd', 'schemas/product.sd', 'schemas/user.sd', 'services.xml'],
    });
    expect(result.prepare.configChangeActions).toEqual({ restart: [], refeed: [], reindex: [] });
    const generation = Number(result.upload['session-id']);
    expect(result.activate.application?.generation).toBe(generation);
    expect(result.convergence).toMatchObject({
      converged: true,
      wantedGeneration: generation,
      currentGeneration: generation,
    });
    const status = await getApplication(target());
    expect(status.generation).toBe(generation);
    expect(status.versions).toEqual([{ generation, engineVersion: '8.600.35' }]);
  });

  it('deploys a .zip and a gzipped tar as they are', async () => {
    const dir = await writeTree({
      'app.zip': zipFiles(sampleFiles()),
      'app.tar.gz': gzipSync(createTar(Object.entries(sampleFiles()).map(([name, data]) => ({ name, data })))),
    });
    const fromZip = await deploy(target(), join(dir, 'app.zip'));
    expect(fromZip.package.source).toBe('zip');
    const fromTgz = await deploy(target(), join(dir, 'app.tar.gz'));
    expect(fromTgz.package).toEqual({
      source: 'gzip',
      files: ['schemas/music.sd', 'schemas/product.sd', 'schemas/user.sd', 'services.xml'],
    });
    expect((await getApplication(target())).generation).toBe(Number(fromTgz.upload['session-id']));
  });

  it('leaves hidden files out of a zipped directory', async () => {
    const dir = await writeTree({
      ...sampleFiles(),
      '.git/config': '[core]',
      '.vespa-bulk/deploy-session': '{}',
      'schemas/.music.sd.swp': 'x',
    });
    const pkg = await readPackage(dir);
    expect(pkg.files).toEqual(['schemas/music.sd', 'schemas/product.sd', 'schemas/user.sd', 'services.xml']);
    await deploy(target(), dir);
    expect(
      (await listContent(target(), '', { recursive: true })).map((u) => u.slice(u.indexOf('/content/') + 9)),
    ).toEqual(['schemas/', 'schemas/music.sd', 'schemas/product.sd', 'schemas/user.sd', 'services.xml']);
  });

  it('refuses bad input locally with VB_USAGE before any request', async () => {
    const dir = await writeTree({
      'schemas/music.sd': 'schema music { document music {} }',
      'notes.txt': 'not a zip',
      'empty.zip': zipFiles({ 'readme.txt': 'hi' }),
      'notes.txt.gz': gzipSync(new TextEncoder().encode('gzipped, but no tar inside')),
      'schemas-only.tar.gz': gzipSync(
        createTar([{ name: 'schemas/music.sd', data: 'schema music { document music {} }' }]),
      ),
      'cut.tar.gz': gzipSync(createTar(Object.entries(sampleFiles()).map(([name, data]) => ({ name, data })))).subarray(
        0,
        40,
      ),
    });
    const cases: [string, RegExp][] = [
      [join(dir, 'missing'), /does not exist/],
      [dir, /has no services.xml/],
      [join(dir, 'notes.txt'), /neither a directory nor a zip/],
      [join(dir, 'empty.zip'), /no services.xml at its root/],
      [join(dir, 'notes.txt.gz'), /gzipped but holds no tar archive/],
      [join(dir, 'schemas-only.tar.gz'), /no services.xml at its root/],
      [join(dir, 'cut.tar.gz'), /not a readable gzip file/],
    ];
    for (const [path, message] of cases) {
      const err = await rejection(deploy({ configUrl: 'http://127.0.0.1:9' }, path));
      expect(isVespaBulkError(err, 'VB_USAGE'), String(err)).toBe(true);
      expect((err as Error).message).toMatch(message);
    }
  });

  it('a refused step is a DeployError naming the step, the status, the error-code and the message', async () => {
    await deploy(target(), sampleAppDir);
    const changed = await writeTree(
      withMusicField(sampleFiles(), 'year', 'field year type string { indexing: summary | attribute }'),
    );
    const err = await rejection(deploy(target(), changed));
    expect(err).toBeInstanceOf(DeployError);
    const e = err as DeployError;
    expect(e.code).toBe('VB_DEPLOY');
    expect([e.step, e.status, e.errorCode]).toEqual(['prepare', 400, 'INVALID_APPLICATION_PACKAGE']);
    expect(e.message).toMatch(
      /^prepare failed: 400 INVALID_APPLICATION_PACKAGE: Invalid application: field-type-change/,
    );

    const ok = await deploy(target(), changed, { ignoreValidationErrors: true });
    expect(ok.prepare.configChangeActions.refeed).toHaveLength(1);
    expect(formatChangeActions(ok.prepare.configChangeActions).join('\n')).toMatch(
      /refeed\s+music in 'content'.*'int' -> 'string'/,
    );

    const again = await rejection(activateSession(target(), ok.upload['session-id']));
    expect(again).toMatchObject({ step: 'activate', status: 409, errorCode: 'ACTIVATION_CONFLICT' });
    const version = await rejection(deploy(target(), sampleAppDir, { vespaVersion: '7.0.0' }));
    expect(version).toMatchObject({ step: 'prepare', status: 400, errorCode: 'UNKNOWN_VESPA_VERSION' });
  });

  it('uploads, prepares and activates as separate calls, and prepareandactivate in one', async () => {
    const upload = await uploadPackage(target(), sampleAppDir);
    const prepared = await prepareSession(target(), upload['session-id'], { verbose: true, timeoutSeconds: 30 });
    expect(prepared.log.some((l) => l.level === 'FINE')).toBe(true);
    const activated = await activateSession(target(), upload['session-id']);
    expect(activated.url).toBe(
      `${server.url}/application/v2/tenant/default/application/default/environment/prod/region/default/instance/default`,
    );
    const both = await prepareAndActivate(target(), sampleAppDir);
    expect(both.activated).toBe(true);
    expect((await getApplication(target())).generation).toBe(Number(both['session-id']));
  });

  it('convergence: one service, an unknown service (410), and a wait that times out', async () => {
    await deploy(target(), sampleAppDir, { waitSeconds: 10 });
    const one = await getServiceConvergence(target(), 'localhost:8080');
    expect(one).toMatchObject({ host: 'localhost:8080', converged: true });
    expect(await rejection(getServiceConvergence(target(), 'gone:1234'))).toMatchObject({
      step: 'converge',
      status: 410,
    });
    await server.close();
    server = await startConfigServer({ port: 0, convergeDelayMs: 60_000 });
    await deploy(target(), sampleAppDir);
    expect((await getConvergence(target())).converged).toBe(false);
    const polls: number[] = [];
    const timeout = await rejection(
      waitForConvergence(target(), {
        timeoutMs: 150,
        pollIntervalMs: 40,
        onPoll: (r) => polls.push(r.currentGeneration),
      }),
    );
    expect(isVespaBulkError(timeout, 'VB_TIMEOUT')).toBe(true);
    expect((timeout as Error).message).toMatch(/did not reach generation \d+ within/);
    expect(polls.length).toBeGreaterThan(1);
  });

  it('content, restart, reindex, reindexing and delete', async () => {
    await deploy(target(), sampleAppDir, { waitSeconds: 10 });
    const services = await readContent(target(), 'services.xml');
    expect(services.contentType).toBe('application/xml');
    expect(new TextDecoder().decode(services.bytes)).toBe(sampleFiles()['services.xml']);
    expect(await listContent(target(), 'schemas')).toEqual([
      `${server.url}/application/v2/tenant/default/application/default/environment/prod/region/default/instance/default/content/schemas/music.sd`,
      expect.stringMatching(/product\.sd$/),
      expect.stringMatching(/user\.sd$/),
    ]);
    expect(isVespaBulkError(await rejection(readContent(target(), '../services.xml')), 'VB_USAGE')).toBe(true);
    expect(await rejection(readContent(target(), 'nope.xml'))).toMatchObject({
      step: 'content cat',
      status: 404,
      errorCode: 'NOT_FOUND',
    });
    expect((await rejection(readContent(target(), 'schemas'))) as Error).toMatchObject({
      code: 'VB_DEPLOY',
      message: "content cat failed: 'schemas' is a directory; list it with content ls",
    });

    expect(await restartServices(target(), { clusterType: ['content'] })).toEqual({ message: 'Success' });
    expect(await rejection(restartServices(target(), { clusterType: ['bogus'] }))).toMatchObject({
      step: 'restart',
      status: 400,
      errorCode: 'BAD_REQUEST',
    });

    expect(isVespaBulkError(await rejection(triggerReindex(target(), { speed: 101 })), 'VB_USAGE')).toBe(true);
    expect(isVespaBulkError(await rejection(triggerReindex(target(), { documentType: ['music'] })), 'VB_USAGE')).toBe(
      true,
    );
    const marked = await triggerReindex(target(), {
      clusterId: ['content'],
      documentType: ['user'],
      speed: 1.5,
      cause: 'test',
    });
    expect(marked.message).toContain('user');
    const status = await eventually(async () => {
      const s = await getReindexing(target());
      return s.clusters.content?.ready.user?.state === 'successful' ? s : undefined;
    });
    expect(status.clusters.content.ready.user).toMatchObject({ progress: 1, speed: 1.5, cause: 'test' });

    expect(await deleteApplication(target())).toEqual({ message: "Application 'default.default.default' deleted" });
    expect(await rejection(getApplication(target()))).toMatchObject({
      step: 'status',
      status: 404,
      errorCode: 'NOT_FOUND',
    });
  });

  it('an unreachable config server is a transport error naming the step', async () => {
    const closed = await startConfigServer({ port: 0 });
    const url = closed.url;
    await closed.close();
    const err = await rejection(getApplication({ configUrl: url }));
    expect(isVespaBulkError(err, 'VB_TRANSPORT')).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`^status failed: cannot reach the config server at ${url}`));
  });
});

describe('deploy library details', () => {
  it('sends --header headers and the target names in the path', async () => {
    const seen: { url?: string; auth?: string } = {};
    const fake = createServer((req, res) => {
      seen.url = req.url;
      seen.auth = req.headers.authorization;
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"generation":7,"applicationPackageFileReference":"x","modelVersions":["8.1.2"]}');
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      const status = await getApplication({
        configUrl: `${url}/`,
        tenant: 'acme',
        application: 'shop',
        environment: 'dev',
        region: 'eu',
        instance: 'blue',
        headers: { authorization: 'Bearer t' },
      });
      expect(status.generation).toBe(7);
      expect(seen).toEqual({
        url: '/application/v2/tenant/acme/application/shop/environment/dev/region/eu/instance/blue',
        auth: 'Bearer t',
      });
    } finally {
      await new Promise((r) => fake.close(r));
    }
  });

  it('remembers and recalls the last prepared session', async () => {
    const dir = await writeTree({});
    const file = join(dir, 'state', 'deploy-session');
    expect(await recallSession(file)).toBeUndefined();
    await rememberSession({ configUrl: 'http://x:19071', tenant: 'default', sessionId: '12' }, file);
    expect(await recallSession(file)).toMatchObject({
      configUrl: 'http://x:19071',
      tenant: 'default',
      sessionId: '12',
    });
    await writeFile(file, 'garbage');
    expect(await recallSession(file)).toBeUndefined();
  });
});
