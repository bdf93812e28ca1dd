import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureReasons, runCli, seededInt, storeMap } from '../faults/harness.js';
import { useFeedFixtures } from './helpers.js';

/**
 * A feed's checkpoint keeps byte offsets into its inputs: a resume into an input edited since would skip
 * operations it never sent. Each operation here increments a counter of its own document, so a document's
 * counter is how many times its operation was applied: every input operation must end as exactly one of applied
 * once, in the failure output with its reason, or (for a refused resume) still ahead of the checkpoint.
 */

// Enough that the first run is stopped (at its first progress line past 1,000 ok, at most 3,000 a second) with
// most of the input ahead, so the seeded edits land on both sides of the checkpoint.
const n = 3_000;
const line = (id: string): string =>
  JSON.stringify({ update: `id:ns:music::${id}`, create: true, fields: { n: { increment: 1 } } });

/** Ids of the operations in `text` (one per line), and the lines that are not whole operations. */
function operationsOf(text: string): { ids: string[]; broken: number[] } {
  const ids: string[] = [];
  const broken: number[] = [];
  text.split('\n').forEach((l, i) => {
    if (l === '') return;
    try {
      ids.push((JSON.parse(l) as { update: string }).update);
    } catch {
      broken.push(i + 1);
    }
  });
  return { ids, broken };
}

function firstDifference(a: Buffer, b: Buffer): number {
  const end = Math.min(a.length, b.length);
  for (let i = 0; i < end; i++) if (a[i] !== b[i]) return i;
  return end;
}

type Edit = 'change' | 'insert' | 'delete' | 'truncate' | 'append';

/** `text` with one seeded random edit of kind `kind`. */
function edited(text: string, kind: Edit, seed: number): string {
  const lines = text.split('\n').slice(0, -1);
  const at = seededInt(seed, 0, lines.length);
  switch (kind) {
    case 'change':
      lines[at] = line(`changed-${seed}`);
      break;
    case 'insert':
      lines.splice(
        at,
        0,
        ...Array.from({ length: seededInt(seed + 1, 1, 4) }, (_, k) => line(`inserted-${seed}-${k}`)),
      );
      break;
    case 'delete':
      lines.splice(at, seededInt(seed + 1, 1, 4));
      break;
    case 'truncate':
      // Anywhere, mid-line too: a line cut short is one that cannot be read.
      return text.slice(0, seededInt(seed + 1, 1, text.length));
    case 'append':
      lines.push(...Array.from({ length: seededInt(seed + 1, 1, 5) }, (_, k) => line(`appended-${seed}-${k}`)));
      break;
  }
  return `${lines.join('\n')}\n`;
}

describe('vespa-bulk feed: a checkpoint that knows its inputs', () => {
  const { server, dir } = useFeedFixtures();

  it('an input edited between an interrupted run and its resume is refused (exit 2) or fed so that nothing is skipped', async () => {
    const a = await server({ maxOpsPerSecond: 3000 });
    const d = dir();
    const env = { VESPA_CLI_HOME: join(d, 'vespa-home') };
    const original = `${Array.from({ length: n }, (_, i) => line(`k${i}`)).join('\n')}\n`;
    writeFileSync(join(d, 'in.jsonl'), original);
    const first = await runCli(['feed', '-t', a.url, '--progress', '0.2', '--checkpoint', 'cp.json', 'in.jsonl'], {
      cwd: d,
      env,
      stopWith: 'SIGINT',
      stopWhen: (stderr) => /ok [1-9],\d{3}/.test(stderr),
    });
    expect(first.code).toBe(130);
    const checkpoint = JSON.parse(readFileSync(join(d, 'cp.json'), 'utf8')) as {
      readTo: { offset: number };
      identity: { kind: string; to: number }[];
    };
    const onA = storeMap(a);
    expect(onA.size).toBeGreaterThan(0);
    expect(onA.size).toBeLessThan(n);
    for (const fields of onA.values()) expect(fields.n).toBe(1);

    const edits: Edit[] = ['change', 'insert', 'delete', 'truncate', 'append'];
    let refused = 0;
    let fed = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const kind = edits[(seed - 1) % edits.length];
      const s = join(d, `s${seed}`);
      mkdirSync(s);
      copyFileSync(join(d, 'cp.json'), join(s, 'cp.json'));
      const text = edited(original, kind, seed * 7919);
      writeFileSync(join(s, 'in.jsonl'), text);
      // Each resume feeds a server of its own, so what it sent is told apart from the first run's.
      const b = await server();
      const resumed = await runCli(
        [
          'feed',
          '-q',
          '-t',
          b.url,
          '--resume-to-other-target',
          '--checkpoint',
          'cp.json',
          '--failures',
          'f.jsonl',
          'in.jsonl',
        ],
        { cwd: s, env },
      );
      const label = `seed ${seed}: ${kind}`;
      expect(storeMap(a), label).toEqual(onA);
      if (firstDifference(Buffer.from(original), Buffer.from(text)) < checkpoint.readTo.offset) {
        // Content before where the checkpoint stands changed: refused, nothing sent, the choices named.
        refused++;
        expect(resumed.code, `${label}\n${resumed.stderr}`).toBe(2);
        expect(resumed.stderr).toContain("checkpoint 'cp.json' does not match its input any more: input in.jsonl: ");
        expect(resumed.stderr).toMatch(/before byte \d+ \(line \d+\) changed|shorter than the checkpoint's position/);
        expect(resumed.stderr).toContain('add --restart, or remove cp.json');
        expect(resumed.stderr).toContain('--resume-changed: operations before the checkpoint');
        expect(b.store.size()).toBe(0);
        continue;
      }
      // Only what comes after the checkpoint's read position changed: it goes on, and every operation of the
      // input as it is now is applied exactly once over both runs, or is in the failure output.
      fed++;
      const { ids, broken } = operationsOf(text);
      const onB = storeMap(b);
      const reasons = failureReasons(join(s, 'f.jsonl'));
      expect(reasons.map((r) => r.inputLine)).toEqual(broken);
      expect(resumed.code, `${label}\n${resumed.stderr}`).toBe(broken.length > 0 ? 1 : 0);
      for (const id of ids) {
        const applied = ((onA.get(id)?.n as number) ?? 0) + ((onB.get(id)?.n as number) ?? 0);
        expect(applied, `${label}: ${id}`).toBe(1);
      }
      expect(onA.size + onB.size).toBe(ids.length);
    }
    // What the checkpoint knows of its input: its bytes up to where it had read.
    expect(checkpoint.identity).toEqual([expect.objectContaining({ kind: 'prefix', to: checkpoint.readTo.offset })]);
    expect(refused).toBeGreaterThan(0);
    expect(fed).toBeGreaterThan(0);

    // Starting afresh, as the refusal offers, feeds every operation of the edited input.
    const s1 = join(d, 's1');
    const b = await server();
    const afresh = await runCli(
      ['feed', '-q', '-t', b.url, '--resume-to-other-target', '--checkpoint', 'cp.json', '--restart', 'in.jsonl'],
      { cwd: s1, env },
    );
    expect(afresh.code, afresh.stderr).toBe(0);
    const { ids } = operationsOf(readFileSync(join(s1, 'in.jsonl'), 'utf8'));
    expect(b.store.size()).toBe(ids.length);
    for (const fields of storeMap(b).values()) expect(fields.n).toBe(1);
  }, 180_000);
});
