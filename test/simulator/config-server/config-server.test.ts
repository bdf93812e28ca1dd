import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTar } from 'nanotar';
import { gzipSync, strToU8 } from 'fflate';
import {
  startConfigServer,
  type ConfigServer,
  type ConfigServerOptions,
} from '../../../src/simulator/config-server/config-server.js';
import { appPath, eventually, rawRequest, sampleFiles, withMusicField, zipFiles } from '../../deploy/fixtures.js';

const zip = { 'content-type': 'application/zip' };
const tenant = '/application/v2/tenant/default';

let server: ConfigServer;
let activations: { documentTypes: string[]; generation: number }[];
let deletions: number;

async function start(options: ConfigServerOptions = {}): Promise<void> {
  activations = [];
  deletions = 0;
  server = await startConfigServer({
    port: 0,
    convergeDelayMs: 60,
    reindexDurationMs: 80,
    onActivate: (a) => activations.push(a),
    onDelete: () => deletions++,
    ...options,
  });
}

const req = (method: string, path: string, body?: Uint8Array, headers?: Record<string, string>) =>
  rawRequest(server.url, method, path, body, headers);

async function upload(files: Record<string, string> = sampleFiles()): Promise<string> {
  const res = await req('POST', `${tenant}/session`, zipFiles(files), zip);
  expect(res.status, res.text).toBe(200);
  return res.json['session-id'] as string;
}

async function deployFiles(files: Record<string, string> = sampleFiles(), prepareQuery = ''): Promise<string> {
  const id = await upload(files);
  const p = await req('PUT', `${tenant}/session/${id}/prepared${prepareQuery}`);
  expect(p.status, p.text).toBe(200);
  const a = await req('PUT', `${tenant}/session/${id}/active`);
  expect(a.status, a.text).toBe(200);
  return id;
}

function expectError(res: { status: number; json: any }, status: number, code: string, message?: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.json['error-code']).toBe(code);
  expect(typeof res.json.message).toBe('string');
  if (message) expect(res.json.message).toMatch(message);
}

describe('config server: sessions', () => {
  beforeEach(() => start());
  afterEach(() => server.close());

  it('upload answers the session id and its prepared and content URLs', async () => {
    const res = await req('POST', `${tenant}/session`, zipFiles(sampleFiles()), zip);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const id = res.json['session-id'];
    expect(res.json).toMatchObject({
      tenant: 'default',
      prepared: `${server.url}${tenant}/session/${id}/prepared`,
      content: `${server.url}${tenant}/session/${id}/content/`,
    });
    expect(res.json.message).toContain(`Session ${id}`);
    const listing = await req('GET', `${tenant}/session/${id}/content/`);
    expect(listing.json).toEqual([
      `${server.url}${tenant}/session/${id}/content/schemas/`,
      `${server.url}${tenant}/session/${id}/content/services.xml`,
    ]);
  });

  it('accepts a gzipped tar package', async () => {
    const tgz = gzipSync(createTar(Object.entries(sampleFiles()).map(([name, data]) => ({ name, data }))));
    const res = await req('POST', `${tenant}/session`, tgz, { 'content-type': 'application/x-gzip' });
    expect(res.status, res.text).toBe(200);
  });

  it.each([
    ['a body that is not an archive', strToU8('this is not a zip'), /not a valid zip/],
    [
      'a package without services.xml',
      zipFiles({ 'schemas/music.sd': 'schema music { document music {} }' }),
      /services.xml not found/,
    ],
    [
      'a services.xml that is not well-formed',
      zipFiles({ ...sampleFiles(), 'services.xml': '<services version="1.0"><container id="x"></services>' }),
      /services.xml is not well-formed XML/,
    ],
    [
      'a schema without a document',
      zipFiles({ ...sampleFiles(), 'schemas/user.sd': 'schema user {\n  fieldset default { fields: name }\n}\n' }),
      /schemas\/user.sd: schema 'user' does not declare a document/,
    ],
  ])('refuses %s with 400 INVALID_APPLICATION_PACKAGE', async (_what, body, message) => {
    expectError(await req('POST', `${tenant}/session`, body, zip), 400, 'INVALID_APPLICATION_PACKAGE', message);
  });

  it('refuses an unknown content type, an unknown tenant and an unknown session', async () => {
    expectError(
      await req('POST', `${tenant}/session`, zipFiles(sampleFiles()), { 'content-type': 'application/json' }),
      400,
      'BAD_REQUEST',
      /application\/zip/,
    );
    expectError(
      await req('POST', '/application/v2/tenant/nobody/session', zipFiles(sampleFiles()), zip),
      404,
      'NOT_FOUND',
      /Tenant 'nobody'/,
    );
    expectError(await req('PUT', `${tenant}/session/999/prepared`), 404, 'NOT_FOUND', /Session 999/);
  });

  it('prepare answers log, configChangeActions and the activate URL; activate makes the application live', async () => {
    const id = await upload();
    const p = await req(
      'PUT',
      `${tenant}/session/${id}/prepared?applicationName=default&instance=default&verbose=true&timeout=30`,
    );
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({
      tenant: 'default',
      'session-id': id,
      activate: `${server.url}${tenant}/session/${id}/active`,
      configChangeActions: { restart: [], refeed: [], reindex: [] },
    });
    expect(p.json.log.length).toBeGreaterThan(0);
    for (const entry of p.json.log) {
      expect(typeof entry.time).toBe('number');
      expect(typeof entry.level).toBe('string');
      expect(typeof entry.message).toBe('string');
    }
    expect(activations).toEqual([]);
    const a = await req('PUT', `${tenant}/session/${id}/active`);
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({
      tenant: 'default',
      'session-id': id,
      url: `${server.url}${appPath}`,
      application: { id: 'default:default:default', generation: Number(id) },
    });
    expect(activations.map(({ documentTypes, generation }) => ({ documentTypes, generation }))).toEqual([
      { documentTypes: ['music', 'user', 'product'], generation: Number(id) },
    ]);
    const app = await req('GET', appPath);
    expect(app.json).toMatchObject({
      generation: Number(id),
      modelVersions: ['8.600.35'],
      versions: [{ generation: Number(id), engineVersion: '8.600.35' }],
    });
    expect(app.json.applicationPackageFileReference).toMatch(/^[0-9a-f]+$/);
  });

  it('verbose adds FINE lines to the log', async () => {
    const id = await upload();
    const quiet = await req('PUT', `${tenant}/session/${id}/prepared`);
    const verbose = await req('PUT', `${tenant}/session/${id}/prepared?verbose=true`);
    expect(quiet.json.log.some((l: any) => l.level === 'FINE')).toBe(false);
    expect(verbose.json.log.some((l: any) => l.level === 'FINE')).toBe(true);
  });

  it('vespaVersion: a bad format is 400 BAD_REQUEST, an unknown version 400 UNKNOWN_VESPA_VERSION, a known one is deployed', async () => {
    const id = await upload();
    expectError(
      await req('PUT', `${tenant}/session/${id}/prepared?vespaVersion=eight`),
      400,
      'BAD_REQUEST',
      /vespaVersion/,
    );
    expectError(
      await req('PUT', `${tenant}/session/${id}/prepared?vespaVersion=9.1.2`),
      400,
      'UNKNOWN_VESPA_VERSION',
      /9.1.2/,
    );
    expectError(await req('PUT', `${tenant}/session/${id}/prepared?timeout=soon`), 400, 'BAD_REQUEST', /timeout/);
    expectError(await req('PUT', `${tenant}/session/${id}/prepared?dryRun=maybe`), 400, 'BAD_REQUEST', /dryRun/);
    expect((await req('PUT', `${tenant}/session/${id}/prepared?vespaVersion=8.599.6`)).status).toBe(200);
    expect((await req('PUT', `${tenant}/session/${id}/active`)).status).toBe(200);
    expect((await req('GET', appPath)).json.modelVersions).toEqual(['8.599.6']);
  });

  it('activate: not prepared is 400, already active 409 ACTIVATION_CONFLICT, a dry-run prepare does not prepare', async () => {
    const id = await upload();
    expectError(await req('PUT', `${tenant}/session/${id}/active`), 400, 'BAD_REQUEST', /not prepared/);
    expect((await req('PUT', `${tenant}/session/${id}/prepared?dryRun=true`)).status).toBe(200);
    expectError(await req('PUT', `${tenant}/session/${id}/active`), 400, 'BAD_REQUEST', /not prepared/);
    expect((await req('PUT', `${tenant}/session/${id}/prepared`)).status).toBe(200);
    expect((await req('PUT', `${tenant}/session/${id}/active`)).status).toBe(200);
    expectError(await req('PUT', `${tenant}/session/${id}/active`), 409, 'ACTIVATION_CONFLICT', /already active/);
    expectError(await req('PUT', `${tenant}/session/${id}/prepared`), 400, 'BAD_REQUEST', /is active/);
  });

  it('a stale session (another was activated since it was prepared) is refused unless ignoreSessionStaleFailure=true', async () => {
    const older = await upload();
    expect((await req('PUT', `${tenant}/session/${older}/prepared`)).status).toBe(200);
    const newer = await deployFiles();
    expectError(
      await req('PUT', `${tenant}/session/${older}/active`),
      409,
      'ACTIVATION_CONFLICT',
      new RegExp(`currently active session \\(${newer}\\)`),
    );
    const forced = await req('PUT', `${tenant}/session/${older}/active?ignoreSessionStaleFailure=true`);
    expect(forced.status).toBe(200);
    // The older session is live, yet the generation moves forward: clients wait for the one activated.
    expect(forced.json.application.generation).toBeGreaterThan(Number(newer));
    const app = (await req('GET', appPath)).json;
    expect(app.generation).toBe(forced.json.application.generation);
    expect(app.versions.map((v: any) => v.generation)).toEqual([Number(newer), forced.json.application.generation]);
  });

  it('the application generation increases with every activation, also after a delete', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      await deployFiles();
      seen.push((await req('GET', appPath)).json.generation);
    }
    const old = await upload();
    expect((await req('PUT', `${tenant}/session/${old}/prepared`)).status).toBe(200);
    await deployFiles();
    seen.push((await req('GET', appPath)).json.generation);
    expect((await req('PUT', `${tenant}/session/${old}/active?ignoreSessionStaleFailure=true`)).status).toBe(200);
    seen.push((await req('GET', appPath)).json.generation);
    expect((await req('DELETE', appPath)).status).toBe(200);
    await deployFiles();
    seen.push((await req('GET', appPath)).json.generation);
    for (let i = 1; i < seen.length; i++)
      expect(seen[i], `generations ${seen.join(', ')}`).toBeGreaterThan(seen[i - 1]);
    expect(activations.map((a) => a.generation)).toEqual(seen);
  });

  it('prepareandactivate uploads, prepares and activates in one request', async () => {
    const res = await req('POST', `${tenant}/prepareandactivate?applicationName=default`, zipFiles(sampleFiles()), zip);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({
      tenant: 'default',
      activated: true,
      url: `${server.url}${appPath}`,
      configChangeActions: { restart: [], refeed: [], reindex: [] },
    });
    expect(Array.isArray(res.json.log)).toBe(true);
    expect(res.json.message).toContain('activated');
    expect((await req('GET', appPath)).json.generation).toBe(Number(res.json['session-id']));
    const dry = await req('POST', `${tenant}/prepareandactivate?dryRun=true`, zipFiles(sampleFiles()), zip);
    expect(dry.json.activated).toBe(false);
    expectError(
      await req('POST', `${tenant}/prepareandactivate`, strToU8('junk'), zip),
      400,
      'INVALID_APPLICATION_PACKAGE',
    );
  });

  it('a changed field type fails prepare with INVALID_APPLICATION_PACKAGE; ignoreValidationErrors turns it into a refeed action', async () => {
    await deployFiles();
    const id = await upload(
      withMusicField(sampleFiles(), 'year', 'field year type string { indexing: summary | attribute }'),
    );
    expectError(
      await req('PUT', `${tenant}/session/${id}/prepared`),
      400,
      'INVALID_APPLICATION_PACKAGE',
      /field-type-change.*'int' -> 'string'.*validation-overrides.xml/s,
    );
    const p = await req('PUT', `${tenant}/session/${id}/prepared?ignoreValidationErrors=true`);
    expect(p.status).toBe(200);
    expect(p.json.configChangeActions.refeed).toEqual([
      expect.objectContaining({ name: 'field-type-change', documentType: 'music', clusterName: 'content' }),
    ]);
    expect(p.json.log.some((l: any) => l.level === 'WARNING' && /re-feed/.test(l.message))).toBe(true);
  });

  it('an indexing change gives a reindex action, an attribute change a restart action', async () => {
    await deployFiles();
    const id = await upload(
      withMusicField(
        withMusicField(sampleFiles(), 'duration', 'field duration type int { indexing: summary | attribute | index }'),
        'popularity',
        'field popularity type float { indexing: summary }',
      ),
    );
    const p = await req('PUT', `${tenant}/session/${id}/prepared`);
    expect(p.status, p.text).toBe(200);
    expect(p.json.configChangeActions.reindex).toEqual([
      expect.objectContaining({ documentType: 'music', clusterName: 'content' }),
    ]);
    expect(p.json.configChangeActions.restart).toEqual([
      expect.objectContaining({ clusterName: 'content', serviceType: 'searchnode' }),
    ]);
    expect(p.json.configChangeActions.refeed).toEqual([]);
  });

  it('405 for a wrong method, 404 for an unknown path, both as {error-code, message}', async () => {
    expectError(await req('GET', `${tenant}/session`), 405, 'METHOD_NOT_ALLOWED');
    expectError(await req('POST', appPath), 405, 'METHOD_NOT_ALLOWED');
    expectError(await req('GET', '/application/v3/whatever'), 404, 'NOT_FOUND');
    expectError(await req('GET', `${appPath}/nonsense`), 404, 'NOT_FOUND');
  });
});

describe('config server: the deployed application', () => {
  beforeEach(() => start());
  afterEach(() => server.close());

  it('GET, DELETE and 404 when there is no application', async () => {
    expectError(await req('GET', appPath), 404, 'NOT_FOUND');
    expectError(await req('DELETE', appPath), 404, 'NOT_FOUND');
    await deployFiles();
    const del = await req('DELETE', appPath);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ message: "Application 'default.default.default' deleted" });
    expect(deletions).toBe(1);
    expectError(await req('GET', appPath), 404, 'NOT_FOUND');
    expectError(await req('GET', `${appPath}/serviceconverge`), 404, 'NOT_FOUND');
  });

  it('with several applications live, the document interface serves all their types until the last is deleted', async () => {
    const userOnly = {
      ...sampleFiles(),
      'services.xml': sampleFiles()['services.xml'].replace(/\s*<document type="music" mode="index"\/>/, ''),
    };
    const musicApp = `${tenant}/application/music/environment/prod/region/default/instance/default`;
    const id = await upload(userOnly);
    expect((await req('PUT', `${tenant}/session/${id}/prepared?applicationName=music`)).status).toBe(200);
    expect((await req('PUT', `${tenant}/session/${id}/active`)).status).toBe(200);
    expect(activations.at(-1)?.documentTypes).toEqual(['user', 'product']);
    await deployFiles();
    expect(activations.at(-1)?.documentTypes.sort()).toEqual(['music', 'product', 'user']);
    expect((await req('DELETE', appPath)).status).toBe(200);
    expect(deletions).toBe(0);
    expect(activations.at(-1)?.documentTypes).toEqual(['user', 'product']);
    expect((await req('DELETE', musicApp)).status).toBe(200);
    expect(deletions).toBe(1);
  });

  it('applicationName and instance address separate applications', async () => {
    const id = await upload();
    expect((await req('PUT', `${tenant}/session/${id}/prepared?applicationName=music&instance=beta`)).status).toBe(200);
    expect((await req('PUT', `${tenant}/session/${id}/active`)).status).toBe(200);
    expect(
      (await req('GET', `${tenant}/application/music/environment/prod/region/default/instance/beta`)).json.generation,
    ).toBe(Number(id));
    expectError(await req('GET', appPath), 404, 'NOT_FOUND');
  });

  it('serviceconverge: services reach the wanted generation after activation', async () => {
    const first = await deployFiles();
    await eventually(async () => ((await req('GET', `${appPath}/serviceconverge`)).json.converged ? true : undefined));
    const second = await deployFiles();
    const right = await req('GET', `${appPath}/serviceconverge?timeout=5s`);
    expect(right.json).toMatchObject({
      url: `${server.url}${appPath}/serviceconverge`,
      wantedGeneration: Number(second),
    });
    for (const s of right.json.services) {
      expect(s).toEqual({
        host: 'localhost',
        port: expect.any(Number),
        type: expect.any(String),
        clusterName: expect.any(String),
        url: `${server.url}${appPath}/serviceconverge/localhost:${s.port}`,
        currentGeneration: expect.any(Number),
      });
      expect([Number(first), Number(second)]).toContain(s.currentGeneration);
    }
    const done = await eventually(async () => {
      const r = await req('GET', `${appPath}/serviceconverge`);
      return r.json.converged ? r.json : undefined;
    });
    expect(done.currentGeneration).toBe(Number(second));
    expect(done.services.map((s: any) => s.type)).toEqual(
      expect.arrayContaining(['container', 'searchnode', 'distributor', 'storagenode']),
    );

    const one = await req('GET', `${appPath}/serviceconverge/localhost:8080`);
    expect(one.json).toEqual({
      url: `${server.url}${appPath}/serviceconverge/localhost:8080`,
      host: 'localhost:8080',
      wantedGeneration: Number(second),
      converged: true,
      currentGeneration: Number(second),
    });
    expect((await req('GET', `${appPath}/serviceconverge/otherhost:8080`)).status).toBe(410);
    expect((await req('GET', `${appPath}/serviceconverge?vespaVersion=8.599.6`)).json.converged).toBe(false);
    expectError(await req('GET', `${appPath}/serviceconverge?timeout=later`), 400, 'BAD_REQUEST');
  });

  it('content: listing (plain and recursive), raw files typed by extension, 404 for a missing file', async () => {
    await deployFiles({
      ...sampleFiles(),
      'search/query-profiles/default.xml': '<query-profile id="default"/>',
      'models/m.json': '{"a":1}',
    });
    const base = `${server.url}${appPath}/content/`;
    expect((await req('GET', `${appPath}/content/`)).json).toEqual([
      `${base}models/`,
      `${base}schemas/`,
      `${base}search/`,
      `${base}services.xml`,
    ]);
    expect((await req('GET', `${appPath}/content/schemas/`)).json).toEqual([
      `${base}schemas/music.sd`,
      `${base}schemas/product.sd`,
      `${base}schemas/user.sd`,
    ]);
    const recursive = (await req('GET', `${appPath}/content/?recursive=true`)).json;
    expect(recursive).toContain(`${base}search/query-profiles/default.xml`);
    expect(recursive).toContain(`${base}search/query-profiles/`);
    const xml = await req('GET', `${appPath}/content/services.xml`);
    expect(xml.headers['content-type']).toBe('application/xml');
    expect(xml.text).toBe(sampleFiles()['services.xml']);
    expect((await req('GET', `${appPath}/content/models/m.json`)).headers['content-type']).toBe('application/json');
    const sd = await req('GET', `${appPath}/content/schemas/music.sd`);
    expect(sd.headers['content-type']).toBe('text/plain');
    expect(sd.text).toBe(sampleFiles()['schemas/music.sd']);
    expectError(await req('GET', `${appPath}/content/schemas/book.sd`), 404, 'NOT_FOUND');
  });

  it('content: paths climbing out of the package are refused', async () => {
    await deployFiles();
    for (const path of [
      '../../../../../etc/passwd',
      '%2e%2e/%2e%2e/session',
      'schemas/..%2F..%2Fservices.xml',
      'schemas/%2E%2E/services.xml',
      './services.xml',
    ]) {
      const res = await req('GET', `${appPath}/content/${path}`);
      expectError(res, 400, 'BAD_REQUEST', /not a path inside the application package/);
    }
  });

  it('restart: Success, with filters; a bad clusterType, host or cluster is 400', async () => {
    await deployFiles();
    expect((await req('POST', `${appPath}/restart`)).json).toEqual({ message: 'Success' });
    const filtered = await req(
      'POST',
      `${appPath}/restart?hostname=localhost&clusterType=content,container&clusterId=content`,
    );
    expect(filtered.status).toBe(200);
    expect(filtered.json).toEqual({ message: 'Success' });
    expectError(await req('POST', `${appPath}/restart?clusterType=search`), 400, 'BAD_REQUEST', /clusterType 'search'/);
    expectError(await req('POST', `${appPath}/restart?hostname=elsewhere`), 400, 'BAD_REQUEST', /elsewhere/);
    expectError(await req('POST', `${appPath}/restart?clusterId=nope`), 400, 'BAD_REQUEST', /nope/);
  });

  it('reindex marks document types; reindexing moves them from pending/running to successful', async () => {
    await deployFiles();
    const marked = await req(
      'POST',
      `${appPath}/reindex?clusterId=content&documentType=music&speed=2&cause=schema%20change`,
    );
    expect(marked.status).toBe(200);
    expect(marked.json.message).toMatch(/music.*content/);
    const first = (await req('GET', `${appPath}/reindexing`)).json;
    expect(first.enabled).toBe(true);
    expect(Array.isArray(first.clusters.content.pending)).toBe(true);
    const entry = first.clusters.content.ready.music;
    expect(['pending', 'running', 'successful']).toContain(entry.state);
    expect(entry).toMatchObject({ speed: 2, cause: 'schema change', readyMillis: expect.any(Number) });
    expect(first.clusters.content.ready.user).toBeUndefined();
    const done = await eventually(async () => {
      const r = (await req('GET', `${appPath}/reindexing`)).json.clusters.content.ready.music;
      return r.state === 'successful' ? r : undefined;
    });
    expect(done.progress).toBe(1);
    expect(done.endedMillis).toBeGreaterThanOrEqual(done.startedMillis);
  });

  it('reindex validation: speed 0.0-100.0, documentType needs clusterId, unknown cluster or type is 400', async () => {
    await deployFiles();
    for (const speed of ['-1', '100.5', 'fast', '']) {
      expectError(await req('POST', `${appPath}/reindex?speed=${speed}`), 400, 'BAD_REQUEST', /speed/);
    }
    expect((await req('POST', `${appPath}/reindex?speed=100`)).status).toBe(200);
    expect((await req('POST', `${appPath}/reindex?speed=0.0&indexedOnly=true`)).status).toBe(200);
    expectError(await req('POST', `${appPath}/reindex?documentType=music`), 400, 'BAD_REQUEST', /clusterId/);
    expectError(await req('POST', `${appPath}/reindex?clusterId=elsewhere`), 400, 'BAD_REQUEST', /elsewhere/);
    expectError(
      await req('POST', `${appPath}/reindex?clusterId=content&documentType=book`),
      400,
      'BAD_REQUEST',
      /book/,
    );
  });
});

describe('config server: options', () => {
  afterEach(() => server.close());

  it('prepares a package whose content cluster has any id without a warning, and announces its clusters on activation', async () => {
    await start();
    const files = sampleFiles();
    const id = await upload({
      ...files,
      'services.xml': files['services.xml'].replace('<content id="content"', '<content id="music-cluster"'),
    });
    const p = await req('PUT', `${tenant}/session/${id}/prepared`);
    expect(p.status, p.text).toBe(200);
    expect(p.json.log.filter((l: any) => l.level === 'WARNING')).toEqual([]);
    expect((await req('PUT', `${tenant}/session/${id}/active`)).status).toBe(200);
    expect((activations.at(-1) as any).contentClusters).toEqual([
      {
        id: 'music-cluster',
        documents: [
          { type: 'music', mode: 'index', global: false },
          { type: 'user', mode: 'index', global: false },
          { type: 'product', mode: 'index', global: false },
        ],
      },
    ]);
  });

  it('listens on the default host with an ephemeral port and reports its URL', async () => {
    await start();
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect((await req('GET', '/state/v1/health')).json).toEqual({ status: { code: 'up' } });
  });
});
