import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startConfigServer, type ConfigServer } from '../../src/simulator/config-server/config-server.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { deleteApplication, getReindexing, triggerReindex } from '../../src/deploy/application.js';
import { deploy } from '../../src/deploy/deploy.js';
import { eventually, sampleAppDir } from './fixtures.js';

/**
 * The link between the two halves: deploying samples/app makes the document interface accept exactly the
 * package's document types.
 */

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function put(
  baseUrl: string,
  type: string,
  local: string,
  fields: object,
): Promise<{ status: number; body: any }> {
  const res = await request(`${baseUrl}/document/v1/mynamespace/${type}/docid/${local}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ fields }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

describe('deploy → document interface', () => {
  it('after deploying samples/app, declared types are accepted and others refused; reindexing completes; delete lifts the restriction', async () => {
    const documents = await startDocumentServer({ port: 0 });
    closers.push(() => documents.close());
    const config: ConfigServer = await startConfigServer({
      port: 0,
      convergeDelayMs: 50,
      reindexDurationMs: 80,
      onActivate: ({ documentTypes }) => documents.setDocumentTypes(documentTypes),
      onDelete: () => documents.setDocumentTypes(null),
    });
    closers.push(() => config.close());
    const target = { configUrl: config.url };

    const before = await put(documents.url, 'book', 'b1', { title: 'anything goes before a deployment' });
    expect(before.status).toBe(200);

    await deploy(target, sampleAppDir, { waitSeconds: 10 });
    const song = await put(documents.url, 'music', 'song-1', {
      title: 'Blue',
      artist: 'Hollow Pines',
      year: 2001,
      duration: 200,
      genres: ['pop'],
      popularity: 1.5,
      ratings: { fan: 4 },
    });
    expect(song.status).toBe(200);
    expect(song.body.id).toBe('id:mynamespace:music::song-1');
    const user = await put(documents.url, 'user', 'u1', {
      name: 'Ada',
      age: 30,
      email: 'ada@example.com',
      tags: ['x'],
      scores: { rock: 1 },
      location: 'Oslo',
    });
    expect(user.status).toBe(200);
    const book = await put(documents.url, 'book', 'b2', { title: 'not in the package' });
    expect(book.status).toBe(400);
    expect(book.body.message).toBe("unknown document type 'book': this deployment has only 'music', 'user', 'product'");

    await triggerReindex(target, { clusterId: ['content'], documentType: ['music'] });
    const done = await eventually(async () => {
      const s = await getReindexing(target);
      const music = s.clusters.content?.ready.music;
      return music?.state === 'successful' ? music : undefined;
    });
    expect(done.progress).toBe(1);

    await deleteApplication(target);
    expect((await put(documents.url, 'book', 'b3', { title: 'allowed again' })).status).toBe(200);
  });
});

describe('deploy → feed through one simulator', () => {
  it('feeding after a deployment: declared types are written, an undeclared one fails with 400 into the results; reindex reaches successful', async () => {
    const { startSimulator } = await import('../../src/simulator/simulator.js');
    const { feed } = await import('../../src/feed/feeder.js');
    const sim = await startSimulator({
      port: 0,
      configPort: 0,
      config: { convergeDelayMs: 50, reindexDurationMs: 80 },
    });
    closers.push(() => sim.close());
    const target = { configUrl: sim.configUrl! };
    const deployed = await deploy(target, sampleAppDir, { waitSeconds: 10 });
    expect(deployed.convergence?.converged).toBe(true);

    const results: { id?: string; ok: boolean; status?: number; message?: string }[] = [];
    const summary = await feed(
      [
        { put: 'id:mynamespace:music::a', fields: { title: 'Blue', year: 2001 } },
        { put: 'id:mynamespace:user::u', fields: { name: 'Ada' } },
        { put: 'id:mynamespace:book::b', fields: { title: 'not in the package' } },
      ],
      { endpoint: sim.url, failures: false, checkpoint: false, onResult: (r) => results.push(r) },
    );
    expect(summary.ok).toBe(2);
    expect(summary.errors).toBe(1);
    const byId = new Map(results.map((r) => [r.id, r]));
    expect(byId.get('id:mynamespace:music::a')).toMatchObject({ ok: true, status: 200 });
    expect(byId.get('id:mynamespace:user::u')).toMatchObject({ ok: true, status: 200 });
    expect(byId.get('id:mynamespace:book::b')).toMatchObject({
      ok: false,
      status: 400,
      message: expect.stringMatching(/book/),
    });

    await triggerReindex(target, { clusterId: ['content'], documentType: ['music'], cause: 'after feed' });
    const done = await eventually(async () => {
      const music = (await getReindexing(target)).clusters.content?.ready.music;
      return music?.state === 'successful' ? music : undefined;
    });
    expect(done).toMatchObject({ progress: 1, cause: 'after feed' });
  });
});
