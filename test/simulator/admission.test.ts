import { describe, expect, it } from 'vitest';
import { Admission, maxQueueAgeMs, prettyBytes, type QueuedOperation } from '../../src/simulator/admission.js';
import { Faults, type FaultSettings } from '../../src/simulator/faults.js';

/** The handler's queue and the content nodes' room, without HTTP: the verdicts and the order operations leave in. */

function admission(settings: Partial<FaultSettings>, heapMb?: number): { admission: Admission; faults: Faults } {
  const faults = new Faults(settings);
  return { admission: new Admission(faults, heapMb), faults };
}

/** A queued operation that records when it leaves. */
function op(
  name: string,
  left: string[],
  fields: { bytes?: number; document?: boolean; enqueuedMs?: number } = {},
): QueuedOperation & { cancel(): void } {
  let cancelled = false;
  return {
    enqueuedMs: fields.enqueuedMs ?? performance.now(),
    bytes: fields.bytes ?? 0,
    document: fields.document ?? true,
    get cancelled() {
      return cancelled;
    },
    cancel() {
      cancelled = true;
    },
    dispatch: () => left.push(name),
    drop: () => left.push(`${name} dropped`),
  };
}

describe('the handler queue', () => {
  it('sends operations on at once while the content nodes have room; only the waiting ones count against the limit', () => {
    const { admission: a } = admission({ contentSlots: 2, queueLimit: 2 });
    expect(a.verdict(10, true)).toBe('dispatch');
    expect(a.verdict(10, true)).toBe('dispatch');
    const left: string[] = [];
    for (const name of ['w1', 'w2']) {
      expect(a.verdict(10, true)).toBe('queue');
      a.enqueue(op(name, left, { bytes: 10 }));
    }
    expect(a.verdict(10, true)).toEqual({
      message: 'Rejecting execution due to overload: 2 requests already enqueued',
    });
    expect(a.counts()).toMatchObject({ waiting: 2, waitingBytes: 20, atContentNodes: 2 });
    // Visits take no room at the content nodes, but wait behind what waits.
    expect(a.verdict(0, false)).toEqual({
      message: 'Rejecting execution due to overload: 2 requests already enqueued',
    });
    a.release(true);
    expect(left).toEqual(['w1']);
    a.release(true);
    expect(left).toEqual(['w1', 'w2']);
    expect(a.counts()).toMatchObject({ waiting: 0, waitingBytes: 0, atContentNodes: 2 });
  });

  it('takes as many as come without a bound on the content nodes (latency alone bounds them)', () => {
    const { admission: a } = admission({ queueLimit: 1 });
    for (let i = 0; i < 1000; i++) expect(a.verdict(100, true)).toBe('dispatch');
    expect(a.counts()).toMatchObject({ waiting: 0, atContentNodes: 1000 });
  });

  it('with queueLimit 0 has no queue: what finds no room is refused, naming the operations at the content nodes', () => {
    const { admission: a } = admission({ contentSlots: 3, queueLimit: 0 });
    for (let i = 0; i < 3; i++) expect(a.verdict(0, true)).toBe('dispatch');
    expect(a.verdict(0, true)).toEqual({ message: 'Rejecting execution due to overload: 3 requests already enqueued' });
    expect(a.verdict(0, false)).toBe('dispatch');
  });

  it('refuses new operations while the oldest waiting one has waited more than 3 s', () => {
    const { admission: a } = admission({ contentSlots: 1 });
    const left: string[] = [];
    expect(a.verdict(0, true)).toBe('dispatch');
    a.enqueue(op('old', left, { enqueuedMs: performance.now() - maxQueueAgeMs - 1 }));
    expect(a.verdict(0, true)).toEqual({
      message: 'Rejecting execution due to overload: 3.0 seconds worth of work enqueued',
    });
    // Once the old one has left, the queue takes operations again.
    a.release(true);
    expect(left).toEqual(['old']);
    expect(a.verdict(0, true)).toBe('queue');
  });

  it('bounds the waiting bytes by a quarter of the heap, but lets a lone operation pass it', () => {
    const { admission: a } = admission({ contentSlots: 1 }, 1);
    expect(a.counts().maxWaitingBytes).toBe(262_144);
    const left: string[] = [];
    expect(a.verdict(0, true)).toBe('dispatch');
    expect(a.verdict(300_000, true)).toBe('queue');
    a.enqueue(op('big', left, { bytes: 300_000 }));
    expect(a.verdict(2048, true)).toEqual({
      message:
        'Rejecting execution due to overload: estimated size of operation is 2 kB, total size of queue 302048 bytes would exceed queue limit of 256 kB',
    });
    // As in the handler: once the waiting bytes are over the bound, even an operation without a body is refused.
    expect(a.verdict(0, true)).toEqual({
      message:
        'Rejecting execution due to overload: estimated size of operation is 0 bytes, total size of queue 300000 bytes would exceed queue limit of 256 kB',
    });
  });

  it('drops cancelled operations when they reach the head, counting them until then', () => {
    const { admission: a } = admission({ contentSlots: 1, queueLimit: 3 });
    const left: string[] = [];
    expect(a.verdict(0, true)).toBe('dispatch');
    const first = op('first', left);
    const second = op('second', left);
    a.enqueue(first);
    a.enqueue(second);
    second.cancel();
    a.cancelled();
    expect(a.counts().waiting).toBe(2);
    first.cancel();
    a.cancelled();
    expect(left).toEqual(['first dropped', 'second dropped']);
    expect(a.counts()).toMatchObject({ waiting: 0, atContentNodes: 1 });
  });

  it('starts document operations at the service rate, in arrival order', async () => {
    const { admission: a } = admission({ maxOpsPerSecond: 50 });
    const left: string[] = [];
    const startedAt = performance.now();
    expect(a.verdict(0, true)).toBe('dispatch');
    for (const name of ['a', 'b', 'c']) {
      expect(a.verdict(0, true)).toBe('queue');
      a.enqueue(op(name, left));
    }
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (left.length === 3) resolve(clearInterval(poll));
      }, 5);
    });
    expect(left).toEqual(['a', 'b', 'c']);
    // Turns 20 ms apart, of which a late timer may catch up 10 ms: the third waiting one starts 50 ms in at the earliest.
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(50);
    a.close();
  });

  it('drops what waits when the server closes', () => {
    const { admission: a } = admission({ contentSlots: 1 });
    const left: string[] = [];
    a.verdict(0, true);
    a.enqueue(op('w', left));
    a.close();
    expect(left).toEqual(['w dropped']);
    expect(a.counts().waiting).toBe(0);
  });
});

describe('prettyBytes', () => {
  it('writes sizes as the handler does: the largest binary unit that divides evenly', () => {
    expect([0, 1, 2, 1000, 1024, 1536, 3 * 1024 * 1024, 402_653_184, 2 ** 40].map(prettyBytes)).toEqual([
      '0 bytes',
      '1 byte',
      '2 bytes',
      '1000 bytes',
      '1 kB',
      '1536 bytes',
      '3 MB',
      '384 MB',
      '1 TB',
    ]);
  });
});
