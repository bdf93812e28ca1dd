import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { writeFileSync } from 'node:fs';
import { startSimulator, type Simulator } from '../../src/simulator/simulator.js';
import { deploy } from '../../src/deploy/deploy.js';
import { feed } from '../../src/feed/feeder.js';
import { bench } from '../../src/bench/bench.js';
import { speedtestSource } from '../../src/bench/speedtest.js';
import type { FeedSummary } from '../../src/feed/stats.js';
import type { PrintedFeedSummary } from '../../src/cli/summary-names.js';
import { tempDir } from '../feed/helpers.js';
import { cliArgs } from '../support/cli-entry.js';

const sampleApp = resolve('samples/app');
let sim: Simulator | undefined;
const dirs: (() => void)[] = [];

afterEach(async () => {
  await sim?.close();
  sim = undefined;
  for (const cleanup of dirs.splice(0)) cleanup();
});

function workDir(): string {
  const t = tempDir();
  dirs.push(t.cleanup);
  return t.dir;
}

async function simulator(faults: { maxOpsPerSecond?: number; queueLimit?: number } = {}): Promise<Simulator> {
  sim = await startSimulator({ port: 0, configPort: 0, faults });
  await deploy({ configUrl: sim.configUrl! }, sampleApp, { waitSeconds: 30 });
  return sim;
}

/** The per-status figures agree with the counts, and the operation latency is there. */
function expectConsistentLatency(s: FeedSummary): void {
  const byCode = s.responseLatencyByCode;
  expect(Object.keys(byCode)).toEqual(Object.keys(s.responseCodes));
  let total = 0;
  for (const [code, f] of Object.entries(byCode)) {
    expect(f.count).toBe(s.responseCodes[code]);
    expect(f.min).toBeLessThanOrEqual(f.p50);
    expect(f.p50).toBeLessThanOrEqual(f.p99);
    expect(f.p99).toBeLessThanOrEqual(f.max * 1.001);
    total += f.count;
  }
  expect(total).toBe(s.responses);
  expect(s.operationLatencyP50Ms).toBeLessThanOrEqual(s.operationLatencyP99Ms);
  expect(s.operationLatencyMaxMs).toBeGreaterThan(0);
}

function run(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('feed --speedtest', () => {
  it('sends dry-run puts of id:test:test::<8 letters> with a field test of BYTES letters: all 200, nothing stored', async () => {
    const s = await simulator();
    const bodies: string[] = [];
    const summary = await feed(speedtestSource(300, 1, 1), {
      endpoint: s.url,
      dryRun: true,
      onResult: (r) => {
        if (bodies.length < 3) bodies.push(r.id!);
      },
    });
    expect(summary.ok).toBeGreaterThan(100);
    expect(summary.errors).toBe(0);
    expect(Object.keys(summary.responseCodes)).toEqual(['200']);
    for (const id of bodies) expect(id).toMatch(/^id:test:test::[a-z]{8}$/);
    // Each request's body: {"fields":{"test":"<300 letters>"}}.
    expect(summary.requestBytes / summary.requests).toBe(300 + '{"fields":{"test":""}}'.length);
    expect(s.documents.store.size()).toBe(0);
    expectConsistentLatency(summary);
  });

  it('the CLI runs it for --speedtest-duration and refuses feed files beside it (exit 2)', async () => {
    const s = await simulator();
    const dir = workDir();
    writeFileSync(`${dir}/x.jsonl`, '');
    const refused = await run(['feed', '--speedtest', '100', 'x.jsonl', '-t', s.url], dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--speedtest cannot be combined with feed files/);
    const ok = await run(['feed', '--speedtest', '100', '--speedtest-duration', '1', '-t', s.url, '-q'], dir);
    expect(ok.code).toBe(0);
    const summary = JSON.parse(ok.stdout) as PrintedFeedSummary;
    expect(summary['feeder.ok.count']).toBeGreaterThan(0);
    expect(summary['http.response.latency.millis.by.code']['200'].count).toBe(summary['http.response.count']);
    expect(s.documents.store.size()).toBe(0);
  });
});

describe('bench', () => {
  it('generates documents to the schemas of samples/app: all accepted and stored, per-status latency adds up', async () => {
    const s = await simulator();
    const result = await bench({ endpoint: s.url, app: sampleApp, count: 2000, seed: 1 });
    const step = result.steps[0];
    expect(result.profile).toBe('adaptive');
    expect(step.ok).toBe(2000);
    expect(step.failed).toBe(0);
    expect(s.documents.store.size()).toBe(2000);
    expect(result.summary.responseCodes).toEqual({ '200': 2000 });
    expectConsistentLatency(result.summary);
  });

  it('a template bench with a mix: puts, updates and removes, all accepted, the store holds puts minus removes', async () => {
    const s = await simulator();
    const dir = workDir();
    writeFileSync(
      `${dir}/t.json`,
      JSON.stringify({
        put: 'id:mynamespace:music::x',
        fields: { title: 'A Song Title', year: 2001, genres: ['rock'] },
      }),
    );
    let puts = 0;
    let removes = 0;
    let updates = 0;
    const result = await bench({
      endpoint: s.url,
      template: `${dir}/t.json`,
      count: 1500,
      mix: 'put=60,update=25,remove=15',
      seed: 2,
      onResult: (r) => {
        if (r.kind === 'put') puts++;
        else if (r.kind === 'remove') removes++;
        else updates++;
      },
    });
    expect(result.steps[0].failed).toBe(0);
    expect(updates).toBeGreaterThan(100);
    expect(removes).toBeGreaterThan(50);
    expect(s.documents.store.size()).toBe(puts - removes);
    const stored = s.documents.store.all()[0];
    expect(stored.id).toMatch(/^id:mynamespace:music::\w+-\d+$/);
  });

  it('a fixed rate: achieved close to asked when the service keeps up; latency from the due time grows when it does not', async () => {
    const s = await simulator({ maxOpsPerSecond: 1500, queueLimit: 256 });
    const easy = await bench({ endpoint: s.url, app: sampleApp, rate: 400, durationSeconds: 2, seed: 3 });
    const hard = await bench({ endpoint: s.url, app: sampleApp, rate: 3000, durationSeconds: 2, seed: 4 });
    const e = easy.steps[0];
    const h = hard.steps[0];
    const told = `asked 400 → ${e.achievedRate}/s p99 ${e.p99Ms} ms; asked 3000 → ${h.achievedRate}/s p99 ${h.p99Ms} ms`;
    expect(e.operations).toBe(800);
    // A rate is a time: held to a quarter of the asked rate (the 2 s run done within 8 s), a bound that only a stuck
    // or starved client fails, as the suite runs on busy machines. Keeping up is told by the contrast below.
    expect(e.achievedRate, told).toBeGreaterThan(0.25 * 400);
    expect(h.achievedRate, told).toBeLessThan(3000);
    expect(h.p99Ms, told).toBeGreaterThan(e.p99Ms);
    expect(e.failed + h.failed).toBe(0);
    expectConsistentLatency(h.summary);
  });

  it('steps stop past the knee and report the highest rate held, below the service rate', async () => {
    const s = await simulator({ maxOpsPerSecond: 2000, queueLimit: 64 });
    const result = await bench({
      endpoint: s.url,
      app: sampleApp,
      dryRun: false,
      rate: [250, 500, 4000, 8000, 16000],
      stepSeconds: 1.5,
      sloMs: 300,
      max429Share: 0.01,
      seed: 5,
    });
    const told = result.steps
      .map(
        (st) =>
          `step ${st.targetRate}/s: achieved ${st.achievedRate}/s, p99 ${st.p99Ms} ms, 429 ${st.throttledShare}, held ${st.held}`,
      )
      .join('; ');
    expect(result.profile).toBe('steps');
    expect(result.stoppedPastKnee, told).toBe(true);
    expect(result.steps.length, told).toBeLessThan(5);
    expect(result.steps[result.steps.length - 1].held, told).toBe(false);
    expect(result.highestHeldRate, told).toBeDefined();
    expect(result.highestHeldRate!, told).toBeLessThan(2000);
    for (const st of result.steps) {
      expect(Date.parse(st.endedAt)).toBeGreaterThanOrEqual(Date.parse(st.startedAt));
      expect(st.summary.responseCodes['200']).toBe(st.ok);
    }
    expect(result.criteria).toEqual({ sloMs: 300, max429Share: 0.01, minAchievedShare: 0.95 });
  });

  it('the CLI refuses a bench without exactly one document source (exit 2) and prints the result as JSON', async () => {
    const s = await simulator();
    const dir = workDir();
    const none = await run(['bench', '-t', s.url, '--count', '10'], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exactly one of --app/);
    const badRamp = await run(['bench', '--app', sampleApp, '--ramp', '5:1:1', '-t', s.url], dir);
    expect(badRamp.code).toBe(2);
    const ok = await run(['bench', '--app', sampleApp, '--count', '200', '--dry-run', '-t', s.url], dir);
    expect(ok.code).toBe(0);
    const result = JSON.parse(ok.stdout) as { steps: { ok: number }[] };
    expect(result.steps[0].ok).toBe(200);
    expect(ok.stderr).toMatch(/adaptive: achieved \d+\/s/);
    expect(s.documents.store.size()).toBe(0);
  });
});
