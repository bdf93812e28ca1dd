import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feed, type OperationResult } from '../../src/index.js';
import { startDocumentServer } from '../../src/simulator/document-api/document-server.js';
import { startFaultFront, type Exchange } from '../support/fault-front.js';
import { cutOf, faultsOf, seededPicker, type Fault } from '../support/cut-points.js';
import { expectSpoke, overProtocols } from '../support/protocols.js';
import {
  expectedStore,
  failureLines,
  failureReasons,
  quickRetries,
  storeMap,
  tempDir,
  writeJsonl,
  type Op,
} from './harness.js';

/**
 * A feed through the fault front, which applies each operation at the simulator and then breaks a third of the
 * first answers after their headers (right after them, inside the JSON, right before its closing brace, after its
 * last byte without the end), every way each protocol's answers break. As docs/feed.md#retries says: an operation
 * safe to repeat (put, assign-only update, remove, none with a condition) is sent again and succeeds; one that is not
 * (an increment, a test-and-set) is never sent again after its answer began, and ends in the failure output with its
 * reason unless its answer said it was done. Every operation ends exactly once, the counts add up, and the store is
 * what the operations make, each applied once.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const perKind = 30;

function corpus(): { ops: Op[]; seeded: Array<{ id: string; fields: Record<string, unknown> }> } {
  const ops: Op[] = [];
  const seeded: Array<{ id: string; fields: Record<string, unknown> }> = [];
  for (let k = 0; k < perKind; k++) {
    // Safe to repeat.
    ops.push({ put: `id:ns:music::p${k}`, fields: { title: `t${k}`, n: k } });
    ops.push({ update: `id:ns:music::u${k}`, create: true, fields: { title: { assign: `u${k}` } } });
    ops.push({ remove: `id:ns:music::r${k}` });
    // Not safe to repeat: an increment, and a test-and-set whose own update makes its condition false.
    ops.push({ update: `id:ns:music::c${k}`, fields: { n: { increment: 1 } } });
    ops.push({ update: `id:ns:music::t${k}`, condition: 'music.n == 0', fields: { n: { assign: 1 } } });
    seeded.push(
      { id: `id:ns:music::r${k}`, fields: { n: 0 } },
      { id: `id:ns:music::c${k}`, fields: { n: 0 } },
      { id: `id:ns:music::t${k}`, fields: { n: 0 } },
    );
  }
  return { ops, seeded };
}

const idOf = (op: Op): string => (op.put ?? op.update ?? op.remove) as string;
const keyOfOp = (op: Op): string =>
  `${op.put !== undefined ? 'POST' : op.update !== undefined ? 'PUT' : 'DELETE'} /document/v1/ns/music/docid/${idOf(op).split('::')[1]}`;
const unsafe = (op: Op): boolean => op.condition !== undefined || JSON.stringify(op.fields ?? {}).includes('increment');

describe.each(overProtocols)('a feed over $protocol whose answers are broken after their headers', ({ protocol }) => {
  it.each(faultsOf[protocol].map((fault, i) => ({ fault, seed: 40 + i })))(
    '$fault.name: safe operations sent again, unsafe ones never sent again, each ending once, applied once',
    async ({ fault, seed }: { fault: Fault; seed: number }) => {
      const { ops, seeded } = corpus();
      const server = await startDocumentServer({ port: 0 });
      cleanups.push(() => server.close());
      server.store.seed(seeded);
      const pick = seededPicker(seed);
      const places = new Map<string, string>();
      let n = 0;
      const front = await startFaultFront(server.url, {
        script: (x: Exchange) => {
          // A third of each kind, by the document's number: the unsafe kinds meet each fault as often as the safe.
          const doc = /::?([a-z])(\d+)$/.exec(x.key) ?? /\/([a-z])(\d+)$/.exec(x.key);
          if (x.arrival !== 1 || doc === null || (Number(doc[2]) + 'purct'.indexOf(doc[1])) % 3 !== 0) return undefined;
          const whole = !fault.clean && fault.framing !== 'content-length';
          const options = [
            { name: 'right after the headers', at: 0 },
            { name: 'inside the JSON', at: 1 + pick(x.body.length - 2) },
            { name: 'right before the closing brace', at: x.body.length - 1 },
            ...(whole ? [{ name: 'after the last byte, without the end', at: x.body.length }] : []),
          ];
          const place = options[n++ % options.length];
          places.set(x.key, place.name);
          return cutOf(fault, place.at, pick(4) === 0 ? 'apart' : 'together');
        },
      });
      cleanups.push(() => front.close());
      const { dir, cleanup } = tempDir();
      cleanups.push(cleanup);
      const failures = join(dir, 'failures.jsonl');
      const results = new Map<string, OperationResult[]>();
      const summary = await feed(writeJsonl(join(dir, 'in.jsonl'), ops), {
        endpoint: front.url,
        protocol,
        failures,
        retryPolicy: quickRetries,
        requestTimeoutMs: 10_000,
        // A few at once: each answer the front cuts is mostly its own (an HTTP/2 connection's end breaks every
        // answer on it), so that every kind meets every fault.
        inflight: 8,
        onResult: (r) => {
          const key = keyOfOp(ops[r.line - 1]);
          results.set(key, [...(results.get(key) ?? []), r]);
        },
      });
      expectSpoke(summary, protocol);
      // What the front passed on for a client that went away reaches the simulator now.
      await front.settled();

      // Each operation ends exactly once: succeeded, or in the failure output with its reason.
      const failed = new Set(failureLines(failures));
      const reasons = failureReasons(failures);
      for (const op of ops) expect(results.get(keyOfOp(op))?.length, keyOfOp(op)).toBe(1);
      expect(summary.ok + failed.size).toBe(ops.length);
      expect(failed).toEqual(new Set(ops.filter((o) => !results.get(keyOfOp(o))![0].ok).map((o) => JSON.stringify(o))));
      expect(reasons.length).toBe(failed.size);
      const reasonOf = new Map(reasons.map((r) => [r.id as string, r]));

      for (const op of ops) {
        const key = keyOfOp(op);
        const r = results.get(key)![0];
        const why = `${key}: ${places.has(key) ? `answer cut ${places.get(key)}` : 'answer not cut (maybe broken with its connection)'}${front.deniedAfterForwarding.has(key) ? `, denied by a GOAWAY after it was passed on ${JSON.stringify(front.deniedAfterForwarding.get(key))}` : ''}; ${JSON.stringify(r)}`;
        if (!unsafe(op)) {
          // Safe: sent again until it went through.
          expect(r.ok, why).toBe(true);
          continue;
        }
        // Not safe: passed on to the simulator at most once (unless a GOAWAY told the client, wrongly, that the server
        // had not processed it, before anything of its answer came), and counted done only when it was applied. A
        // failure says the outcome is unknown (not a 412 of its own making, after a second try).
        const denied = front.deniedAfterForwarding.get(key);
        const lied = denied !== undefined && !denied.headersSent;
        if (!lied) expect(front.forwarded.get(key) ?? 0, why).toBeLessThanOrEqual(1);
        if (!r.ok && !lied)
          expect(String(reasonOf.get(idOf(op))?.code), `${why}: ${JSON.stringify(reasonOf.get(idOf(op)))}`).toMatch(
            /^VB_(TRANSPORT|BAD_RESPONSE|TIMEOUT)$/,
          );
        const value = server.store.get(idOf(op))!.fields.n;
        // Applied as often as it reached the simulator (a test-and-set once at most: its condition no longer holds).
        const forwarded = front.forwarded.get(key) ?? 0;
        expect(value, why).toBe(op.condition !== undefined ? Math.min(forwarded, 1) : forwarded);
        if (r.ok && !lied) expect(value, why).toBe(1);
      }
      // The safe operations all applied, in order; the unsafe ones as checked above.
      const safe = ops.filter((o) => !unsafe(o));
      const expected = expectedStore([
        ...seeded.filter((d) => d.id.includes('::r')).map((d) => ({ put: d.id, fields: d.fields })),
        ...safe,
      ]);
      const actual = storeMap(server);
      for (const id of actual.keys()) if (/::[ct]\d/.test(id)) actual.delete(id);
      expect(actual).toEqual(expected);
      expect(summary.errors).toBe(failed.size);
      expect([...failed].every((line) => unsafe(JSON.parse(line) as Op))).toBe(true);
      // The faults happened (an HTTP/2 connection's end breaks every answer on it: fewer cuts of the front's own).
      expect(front.cuts.length, fault.name).toBeGreaterThan(2);
    },
  );
});
