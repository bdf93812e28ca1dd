import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DocumentStore,
  startDocumentServer,
  type DocumentServer,
} from '../../src/simulator/document-api/document-server.js';
import { readStatsFile } from '../../src/report/stats-file.js';
import { mergeRuns } from '../../src/report/merge.js';
import { shardOf } from '../../src/feed/shard.js';
import { applyReplacements } from '../package/kustomization.js';
import { expectNothingLost, mixedOperations, runCli, tempDir, type CliRun } from '../faults/harness.js';

interface Container {
  name: string;
  command: string[];
  args: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
}

interface IndexedJob {
  spec: {
    completionMode: string;
    completions: number;
    parallelism: number;
    template: { spec: { containers: Container[] } };
  };
}

/**
 * The Kubernetes example run as Kubernetes would run it, on this machine: for each index the container's
 * argument list with `$(JOB_COMPLETION_INDEX)` and `$(VAR)` expanded from the environment the pod gets
 * (the token from its Secret), only the target and the /data paths pointed at the test's simulator and
 * temporary directory. One pod is killed (SIGKILL) and started again with the same arguments, as the Job
 * would start a new pod for its index.
 */
describe('examples/kubernetes/feed', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('N indexed pods, one killed and restarted, against a faulty service: the union is the input, shards disjoint, the report adds up', async () => {
    // As `kubectl apply -k examples/kubernetes/feed` sends it (kubernetes-manifests.test.ts checks that kubectl
    // renders the same).
    const [job] = applyReplacements('examples/kubernetes/feed') as unknown as IndexedJob[];
    expect(job.spec.completionMode).toBe('Indexed');
    const n = job.spec.completions;
    expect(job.spec.parallelism).toBe(n);
    const container = job.spec.template.spec.containers[0];
    expect(container.args).toContain('$(JOB_COMPLETION_INDEX)/$(SHARDS)');
    expect(container.env?.find((e) => e.name === 'SHARDS')?.value).toBe(String(n));
    expect(container.env?.find((e) => e.name === 'VESPA_BULK_TOKEN')?.valueFrom?.secretKeyRef).toBeDefined();

    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const token = 'fleet-test-token';
    // One store behind N endpoints: each pod gets its own, so the requests of each shard are seen apart.
    const store = new DocumentStore(['content']);
    const sent: Array<Set<string>> = [];
    const servers: DocumentServer[] = [];
    for (let i = 0; i < n; i++) {
      const ids = new Set<string>();
      sent.push(ids);
      const log = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString().split('\n')) {
            const url = line.split(' ')[2];
            // /document/v1/<namespace>/<type>/docid/<user part>: back to the document id the shard was hashed from.
            const m = /^\/document\/v1\/([^/]+)\/([^/]+)\/docid\/([^?]+)/.exec(url ?? '');
            if (m !== null)
              ids.add(`id:${decodeURIComponent(m[1])}:${decodeURIComponent(m[2])}::${decodeURIComponent(m[3])}`);
          }
          done();
        },
      });
      const server = await startDocumentServer({
        port: 0,
        store,
        token,
        requestLog: log,
        faults: { maxOpsPerSecond: 1500 / n, errorRate: 0.03, errorStatuses: [503, 429], closeRate: 0.005 },
      });
      cleanups.push(() => server.close());
      servers.push(server);
    }

    const ops = mixedOperations(4000, 'fleet');
    mkdirSync(join(dir, 'input'));
    writeFileSync(join(dir, 'input/documents.jsonl.gz'), gzipSync(`${ops.map((o) => JSON.stringify(o)).join('\n')}\n`));

    const podArgs = (index: number): string[] => {
      // The container's own variables (SHARDS), and the index the Job gives each pod.
      const env: Record<string, string> = {
        ...Object.fromEntries((container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]]))),
        JOB_COMPLETION_INDEX: String(index),
      };
      // As the kubelet expands $(VAR) in command and args: from the container's environment.
      // The command is the image's executable; runCli runs bin/vespa-bulk.js with the same arguments.
      const args = container.args.map((a) =>
        a.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (m, name: string) => env[name] ?? m),
      );
      const out: string[] = [];
      for (let k = 0; k < args.length; k++) {
        const a = args[k];
        if (a === '--target') {
          out.push(a, servers[index].url);
          k++;
        }
        // No TLS in this test: the simulator takes the token only.
        else if (a === '--cert' || a === '--key') k++;
        else out.push(a.startsWith('/data/') ? join(dir, a.slice('/data/'.length)) : a);
      }
      return [...out, '--quiet'];
    };
    const podEnv = { VESPA_BULK_TOKEN: token };

    const killed = 1;
    const runs: Array<Promise<CliRun>> = [];
    for (let i = 0; i < n; i++) {
      const args = podArgs(i);
      expect(args).toContain(`${i}/${n}`);
      runs.push(
        i === killed
          ? runCli(args, {
              cwd: dir,
              env: podEnv,
              stopWith: 'SIGKILL',
              stopWhen: () => sent[killed].size >= 500 && store.size() > 1200,
            })
          : runCli(args, { cwd: dir, env: podEnv }),
      );
    }
    const first = await Promise.all(runs);
    expect(first[killed].signal).toBe('SIGKILL');
    // The Job starts a new pod for the index, with the same arguments.
    const again = await runCli(podArgs(killed), { cwd: dir, env: podEnv });
    const finals = first.map((r, i) => (i === killed ? again : r));
    for (const [i, r] of finals.entries()) expect(r.code, `pod ${i}: ${r.stderr}`).toBe(0);

    // The union is the input, nothing lost.
    expectNothingLost({ store }, ops, ops.length, join(dir, 'failures-none.jsonl'));
    // No operation sent by two shards, and each shard sent exactly its ids.
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) expect([...sent[i]].filter((id) => sent[j].has(id))).toEqual([]);
      for (const id of sent[i]) expect(shardOf(id, n)).toBe(i);
    }

    // One report from the N stats files; its ok count is every operation: each pod's summary counts its whole
    // feed, the killed pod's the part its first run finished before its checkpoint too (beside this run's).
    const statsFiles = Array.from({ length: n }, (_, i) => join(dir, `stats-feed-${i}.jsonl`));
    const merged = mergeRuns(statsFiles.map((f) => readStatsFile(f)));
    const summaries = finals.map((r) => JSON.parse(r.stdout) as Record<string, number>);
    const shardOps = ops.filter((o) => shardOf((o.put ?? o.update ?? o.remove) as string, n) === killed).length;
    const restarted = summaries[killed];
    const doneBefore =
      restarted['feeder.ok.count'] - (restarted['feeder.run.ok.count'] ?? restarted['feeder.ok.count']);
    expect(restarted['feeder.skipped.count']).toBe(ops.length - shardOps);
    const mergedOk = merged.summary!.summary['feeder.ok.count'] as number;
    expect(mergedOk).toBe(summaries.reduce((s, x) => s + x['feeder.ok.count'], 0));
    expect(
      mergedOk,
      `fleet of ${n}: pod ${killed} killed and restarted; ${doneBefore} of its ${shardOps} operations done before its checkpoint`,
    ).toBe(ops.length);
    const report = await runCli(['report', ...statsFiles, '-o', join(dir, 'report.html')], { cwd: dir });
    expect(report.code, report.stderr).toBe(0);
  }, 120_000);
});
