import { join, relative } from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Feeder } from '../../src/feed/feeder.js';
import { readFeedCheckpoint, type FeedCheckpoint } from '../../src/feed/feed-checkpoint.js';
import { type FeedOptions } from '../../src/feed/options.js';
import { recordFeed, resumedOptions, ResumeConflictError } from '../../src/feed/recorded-options.js';
import { storeMap, writeJsonl, type Op } from '../faults/harness.js';
import { startRecordingServer } from '../http/recording-server.js';
import { useFeedFixtures } from './helpers.js';

const ops: Op[] = Array.from({ length: 3000 }, (_, i) => ({ put: `id:ns:music::r${i}`, fields: { i } }));

/**
 * Feeds `input` with `options` and stops it (as Ctrl-C does) once `after` operations are finished: a checkpoint of a
 * feed part done.
 */
async function stoppedFeed(input: string, options: FeedOptions, after = 200): Promise<FeedCheckpoint> {
  const stop = new AbortController();
  let done = 0;
  const outcome = await new Feeder({
    ...options,
    signal: stop.signal,
    onResult: () => {
      if (++done === after) stop.abort();
    },
  }).run(input);
  expect(outcome.stopped).toBe('interrupted');
  return readFeedCheckpoint(options.checkpoint as string);
}

function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('a feed checkpoint knows where it goes', () => {
  const { server, dir } = useFeedFixtures();

  it('records the endpoint without credentials; a resume with none feeds it, another is refused unless resumeToOtherTarget', async () => {
    // Slow enough that the stop comes long before the end.
    const a = await server({ maxOpsPerSecond: 2000 });
    const b = await server();
    const d = dir();
    const input = writeJsonl(join(d, 'in.jsonl'), ops);
    const checkpoint = join(d, 'cp.json');
    const failures = join(d, 'failures.jsonl');
    const withCredentials = a.url.replace('http://', 'http://user:secret@') + '/?token=secret';
    const saved = await stoppedFeed(input, {
      endpoint: withCredentials,
      checkpoint,
      failures,
      headers: { authorization: 'Bearer secret' },
    });
    expect(saved.version).toBe(2);
    expect(saved.endpoint).toBe(a.url);
    expect(readFileSync(checkpoint, 'utf8')).not.toContain('secret');
    const fedToA = a.store.size();
    expect(fedToA).toBeLessThan(ops.length);

    // Another endpoint: refused before anything is sent, naming both.
    const refused = thrown(() => new Feeder({ resume: checkpoint, failures, endpoint: b.url }));
    expect(refused).toBeInstanceOf(ResumeConflictError);
    expect(refused).toMatchObject({
      code: 'VB_USAGE',
      option: 'endpoint',
      message: expect.stringMatching(new RegExp(`${a.url}, not ${b.url}.*resumeToOtherTarget`)),
    });
    // The same endpoint written otherwise (a trailing slash, credentials) is the same target.
    expect(resumedOptions({ endpoint: `${a.url.replace('//', '//u:p@')}/` }, saved).endpoint).toBe(
      `${a.url.replace('//', '//u:p@')}/`,
    );

    // None given: the recorded one, not the default.
    const outcome = await new Feeder({ resume: checkpoint, failures }).run(input);
    expect(outcome.summary.errors).toBe(0);
    expect(storeMap(a).size).toBe(ops.length);
    expect(b.store.size()).toBe(0);
  });

  it('feeds the rest elsewhere with resumeToOtherTarget, and that checkpoint then records the new endpoint', async () => {
    const a = await server({ maxOpsPerSecond: 2000 });
    const b = await server();
    const d = dir();
    const input = writeJsonl(join(d, 'in.jsonl'), ops);
    const checkpoint = join(d, 'cp.json');
    await stoppedFeed(input, { endpoint: a.url, checkpoint });
    const onA = a.store.size();
    const outcome = await new Feeder({
      resume: checkpoint,
      checkpoint,
      endpoint: b.url,
      resumeToOtherTarget: true,
    }).run(input);
    expect(outcome.summary.errors).toBe(0);
    expect(a.store.size()).toBe(onA);
    // Everything not finished on a went to b: together they hold every document.
    const both = new Set([...storeMap(a).keys(), ...storeMap(b).keys()]);
    expect(both.size).toBe(ops.length);
    expect((await readFeedCheckpoint(checkpoint)).endpoint).toBe(b.url);
  });

  it("binds no endpoint where nothing answered: the same feed with the target put right goes on, and keeps an earlier run's", async () => {
    const live = await server({ maxOpsPerSecond: 2000 });
    const gone = await server();
    await gone.close();
    const d = dir();
    const input = writeJsonl(join(d, 'in.jsonl'), ops);
    const checkpoint = join(d, 'cp.json');
    const first = await new Feeder({ endpoint: gone.url, checkpoint, dryRun: true }).run(input);
    expect(first.stopped).toBe('unreachable');
    const unbound = await readFeedCheckpoint(checkpoint);
    expect(unbound.endpoint).toBeUndefined();
    expect(unbound.options).toEqual({ dryRun: true });
    // Another endpoint is no conflict; the settings still are.
    expect(() => new Feeder({ resume: checkpoint, endpoint: live.url, dryRun: false })).toThrow(ResumeConflictError);
    const bound = await stoppedFeed(input, { resume: checkpoint, checkpoint, endpoint: live.url });
    expect(bound).toMatchObject({ endpoint: live.url, options: { dryRun: true } });
    // A resume that finds nothing answering keeps the endpoint that has the first part.
    const again = await new Feeder({
      resume: checkpoint,
      checkpoint,
      endpoint: gone.url,
      resumeToOtherTarget: true,
    }).run(input);
    expect(again.stopped).toBe('unreachable');
    expect((await readFeedCheckpoint(checkpoint)).endpoint).toBe(live.url);
  });

  it('takes the route, dry run and transform from the checkpoint when left out, and refuses others', async () => {
    // A stop after 50: the first 50 answered, the rest hang until the resume.
    let answering = false;
    const s = await startRecordingServer((req, res) => {
      const n = Number(/\/docid\/r(\d+)/.exec(req.url)?.[1]);
      if (!answering && n >= 50) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const d = dir();
    try {
      const input = writeJsonl(join(d, 'in.jsonl'), ops.slice(0, 200));
      const module = join(d, 't.mjs');
      writeFileSync(module, 'export default (op) => ({ ...op, fields: { ...op.fields, t: 1 } });\n');
      const checkpoint = join(d, 'cp.json');
      const options: FeedOptions = {
        endpoint: s.url,
        checkpoint,
        route: 'indexing',
        dryRun: true,
        transform: module,
        stopGraceMs: 50,
      };
      const saved = await stoppedFeed(input, options, 50);
      expect(saved.options).toEqual({ route: 'indexing', dryRun: true, transform: module });
      answering = true;
      const before = s.requests.length;
      // The module named otherwise (relative to the working directory) is the same module.
      const outcome = await new Feeder({
        resume: checkpoint,
        endpoint: s.url,
        transform: relative(process.cwd(), module),
      }).run(input);
      // The whole feed's counts (the 50 of the first run in them), and this run's 150 beside.
      expect(outcome.summary).toMatchObject({ ok: 200, skipped: 0, errors: 0, runOk: 150, runOperations: 150 });
      const resumed = s.requests.slice(before);
      expect(resumed).toHaveLength(150);
      for (const r of resumed) {
        expect(r.url).toContain('route=indexing');
        expect(r.url).toContain('dryRun=true');
        expect(JSON.parse(r.body.toString()).fields.t).toBe(1);
      }
      for (const [given, recorded] of [
        [{ dryRun: false }, /written with dryRun, not without dryRun/],
        [{ transform: join(d, 'other.mjs') }, /written with transform .*t\.mjs, not with transform .*other\.mjs/],
        [{ inputFormat: 'jsonl' as const }, /written without inputFormat, not with inputFormat jsonl/],
        [{ route: 'other' }, /written with route indexing, not with route other.*resumeToOtherTarget/],
      ] as const) {
        expect(() => new Feeder({ resume: checkpoint, ...given })).toThrow(recorded);
      }
      // A route, like the endpoint, may be changed on purpose; what the requests carry may not.
      expect(resumedOptions({ route: 'other', resumeToOtherTarget: true }, saved).route).toBe('other');
      expect(() => new Feeder({ resume: checkpoint, dryRun: false, resumeToOtherTarget: true })).toThrow(
        ResumeConflictError,
      );
    } finally {
      await s.close();
    }
  });
});

describe('resumedOptions', () => {
  const recorded = {
    shard: '1/3',
    ...recordFeed({
      endpoint: 'http://a.example:8080/',
      rows: {
        idField: 'sku',
        operation: 'update',
        create: true,
        timestampUnit: 'ms',
        configUrl: 'http://cfg.example:19071/?x=1',
      },
    }),
  };

  it('records table settings as given, defaults and schemas in code left out', () => {
    expect(
      recordFeed({
        rows: { operation: 'put', timestampUnit: 's', create: false, model: { types: new Map() } as never },
      }),
    ).toEqual({ endpoint: 'http://127.0.0.1:8080' });
    expect(recorded.options).toEqual({
      rows: {
        idField: 'sku',
        operation: 'update',
        create: true,
        timestampUnit: 'ms',
        configUrl: 'http://cfg.example:19071',
      },
    });
    // Not checked until a table needs it: a save must not fail on it.
    expect(recordFeed({ rows: { configUrl: 'cfg:19071' } }).options).toEqual({ rows: { configUrl: 'cfg:19071' } });
  });

  it('takes what is left out, keeps what agrees, refuses what differs by its option name', () => {
    expect(resumedOptions({}, recorded)).toEqual({
      endpoint: 'http://a.example:8080',
      shard: { index: 1, count: 3 },
      rows: recorded.options!.rows,
    });
    const agreeing = resumedOptions({ rows: { idField: 'sku', create: true } }, recorded);
    expect(agreeing.rows).toMatchObject({ idField: 'sku', operation: 'update', create: true });
    const refused = thrown(() =>
      resumedOptions({ rows: { idField: 'id' } }, recorded, "checkpoint 'cp.json'"),
    ) as ResumeConflictError;
    expect(refused).toMatchObject({ code: 'VB_USAGE', option: 'rows.idField' });
    expect(refused.message).toBe(
      "checkpoint 'cp.json' was written with rows.idField sku, not with rows.idField id: a resume sends the rest of the feed as it began; give the same, or leave it out to take it from the checkpoint",
    );
    // The CLI names its flags: a row option is a flag of its own.
    expect(refused.messageWith((o) => `--${o.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)).toContain(
      'with --id-field sku, not with --id-field id',
    );
  });

  it('takes nothing from and checks nothing against a version 1 checkpoint, but its shard', () => {
    expect(resumedOptions({ endpoint: 'http://b.example', dryRun: true }, { version: 1, shard: '0/2' })).toEqual({
      endpoint: 'http://b.example',
      dryRun: true,
      shard: { index: 0, count: 2 },
    });
  });

  it('cannot give back a transform function: it must be given again', () => {
    const fn = (op: object) => op;
    const saved = recordFeed({ transform: fn });
    expect(saved.options).toEqual({ transform: '<function>' });
    expect(() => resumedOptions({}, saved)).toThrow(/transform function .* give it again/);
    expect(resumedOptions({ transform: fn }, saved).transform).toBe(fn);
  });
});
