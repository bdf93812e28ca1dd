/**
 * `npm run demo`: the main job end to end on the embedded simulator, with nothing to set up. Starts the
 * simulator on free ports, deploys samples/app, feeds the sample corpus and its updates, visits everything
 * back over four slices, checks that what came back is what was fed, and prints one JSON summary on stdout.
 */
import { fileURLToPath } from 'node:url';
import { deploy } from '../deploy/deploy.js';
import { feed } from '../feed/feeder.js';
import type { FeedSummary } from '../feed/stats.js';
import { visit } from '../visit/visit.js';
import { startSimulator } from '../simulator/simulator.js';
import { roundSeconds, writeSummary } from './summary-names.js';

const samples = (name: string): string => fileURLToPath(new URL(`../../samples/${name}`, import.meta.url));
const log = (line: string): void => void process.stderr.write(`demo: ${line}\n`);

/** What the sample corpus holds after samples/updates.jsonl: 3000 songs + 1 created - 1 removed; 1500 users - 1 removed. */
const expected = { music: 3000, user: 1499 };

function feedFigures(s: FeedSummary): Record<string, number> {
  return {
    operations: s.operations,
    ok: s.ok,
    errors: s.errors,
    seconds: s.seconds,
    'ok.rate': s.okRate,
    'latency.p99.ms': s.responseLatencyP99Ms,
  };
}

export async function runDemo(): Promise<number> {
  const sim = await startSimulator({ port: 0, configPort: 0, config: { convergeDelayMs: 200 } });
  try {
    log(`simulator: documents at ${sim.url}, config server at ${sim.configUrl}`);

    const deployed = await deploy({ configUrl: sim.configUrl }, samples('app'), { waitSeconds: 30 });
    log(
      `deployed samples/app: session ${deployed.activate['session-id']}, converged: ${deployed.convergence?.converged}`,
    );

    const quiet = { endpoint: sim.url, failures: false as const, checkpoint: false as const };
    const corpus = await feed([samples('music.jsonl'), samples('users.json')], quiet);
    log(`fed ${corpus.ok} of ${corpus.operations} operations in ${corpus.seconds.toFixed(2)} s`);
    // Updates and removes of documents fed above: a second feed, so they surely come after their puts.
    const updates = await feed(samples('updates.jsonl'), quiet);
    log(`fed ${updates.ok} of ${updates.operations} updates and removes`);

    const started = Date.now();
    const byType: Record<string, number> = {};
    const bySlice: Record<string, number> = {};
    const seen = new Set<string>();
    let duplicates = 0;
    for await (const doc of visit({ endpoint: sim.url, cluster: 'content', slices: 4 })) {
      const type = doc.id.split(':')[2] ?? '?';
      byType[type] = (byType[type] ?? 0) + 1;
      bySlice[doc.slice] = (bySlice[doc.slice] ?? 0) + 1;
      if (seen.has(doc.id)) duplicates++;
      seen.add(doc.id);
    }
    const visitSeconds = (Date.now() - started) / 1000;
    log(`visited ${seen.size} documents over 4 slices in ${visitSeconds.toFixed(2)} s`);

    const matches = byType.music === expected.music && byType.user === expected.user && duplicates === 0;
    const feedFailed = corpus.errors + updates.errors;
    const summary = {
      deploy: { session: deployed.activate['session-id'], converged: deployed.convergence?.converged ?? false },
      feed: { corpus: feedFigures(corpus), updates: feedFigures(updates) },
      visit: { documents: seen.size, byType, bySlice, duplicates, seconds: roundSeconds(visitSeconds) },
      expected,
      ok: matches && feedFailed === 0,
    };
    writeSummary(summary);
    log(
      summary.ok ? 'what was visited back is what was fed' : 'MISMATCH between what was fed and what was visited back',
    );
    return summary.ok ? 0 : 1;
  } finally {
    await sim.close();
  }
}

process.exitCode = await runDemo();
