import { describe, expect, it, vi } from 'vitest';
import { ChainScheduler, type ChainRunner } from '../../src/visit/chain-scheduler.js';

/** The scheduler with a runner that is not a visit: chains that end when told, to see what runs when. */
function fakeRunner(): ChainRunner & {
  running: Set<string>;
  started: string[];
  maxRunning: number;
  end(key: string, how?: 'done' | 'parked' | Error): void;
} {
  const ends = new Map<string, (how: 'done' | 'parked' | Error) => void>();
  const r = {
    running: new Set<string>(),
    started: [] as string[],
    maxRunning: 0,
    run(key: string): Promise<'done' | 'parked'> {
      r.running.add(key);
      r.started.push(key);
      r.maxRunning = Math.max(r.maxRunning, r.running.size);
      return new Promise((resolve, reject) =>
        ends.set(key, (how) => {
          r.running.delete(key);
          if (how instanceof Error) reject(how);
          else resolve(how);
        }),
      );
    },
    park(): void {},
    delivered: () => 0,
    end(key: string, how: 'done' | 'parked' | Error = 'done'): void {
      ends.get(key)!(how);
    },
  };
  return r;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the chain scheduler', () => {
  it("runs at most the fixed limit at once, each chain once, the next waiting one taking an ended one's place", async () => {
    const runner = fakeRunner();
    const keys = Array.from({ length: 10 }, (_, i) => String(i));
    const scheduler = new ChainScheduler({
      keys,
      limit: 3,
      runner,
      documents: () => 0,
      signal: new AbortController().signal,
    });
    expect([...runner.running]).toEqual(['0', '1', '2']);
    for (let i = 0; i < 10; i++) {
      runner.end(String(i));
      await tick();
    }
    await scheduler.done;
    expect(runner.started).toEqual(keys);
    expect(runner.maxRunning).toBe(3);
    expect(scheduler.report()).toMatchObject({ mode: 'fixed', limit: 3, maxLimit: 3, changes: [] });
  });

  it('puts a parked chain first in the queue', async () => {
    const runner = fakeRunner();
    const scheduler = new ChainScheduler({
      keys: ['a', 'b', 'c'],
      limit: 1,
      runner,
      documents: () => 0,
      signal: new AbortController().signal,
    });
    runner.end('a', 'parked');
    await tick();
    expect(runner.started).toEqual(['a', 'a']);
    runner.end('a');
    await tick();
    runner.end('b');
    await tick();
    runner.end('c');
    await scheduler.done;
    expect(runner.started).toEqual(['a', 'a', 'b', 'c']);
  });

  it('starts nothing more once the signal stops the visit, and is done when the running chains end', async () => {
    const runner = fakeRunner();
    const controller = new AbortController();
    const scheduler = new ChainScheduler({
      keys: ['a', 'b', 'c'],
      limit: 2,
      runner,
      documents: () => 0,
      signal: controller.signal,
    });
    controller.abort();
    runner.end('a');
    runner.end('b');
    await scheduler.done;
    expect(runner.started).toEqual(['a', 'b']);
  });

  it('a chain that fails the visit rejects at once and calls onFailure (which stops the others)', async () => {
    const runner = fakeRunner();
    const failures: unknown[] = [];
    const scheduler = new ChainScheduler({
      keys: ['a', 'b', 'c'],
      limit: 2,
      runner,
      documents: () => 0,
      signal: new AbortController().signal,
      onFailure: (e) => failures.push(e),
    });
    runner.end('a', new Error('unreachable'));
    await expect(scheduler.done).rejects.toThrow('unreachable');
    expect(failures).toHaveLength(1);
    runner.end('b');
    await tick();
    expect(runner.started).toEqual(['a', 'b']);
  });

  it('with nothing to run, is done at once', async () => {
    const scheduler = new ChainScheduler({
      keys: [],
      limit: { adaptive: { start: 4, max: 4 }, windowMs: 1000 },
      runner: fakeRunner(),
      documents: () => 0,
      signal: new AbortController().signal,
    });
    await scheduler.done;
    expect(scheduler.report().mode).toBe('adaptive');
  });

  describe('the adaptive climb, on a fake clock', () => {
    /**
     * Chains that never end, each delivering `perStep` documents every 50 ms once `delay` steps after it started (the
     * service scales with the chains, so each doubling pays); advances the clock until `until` (ms) and returns
     * when each level began. With `readyAt`, the runner takes chains from then on (its threads were starting): none
     * does anything before.
     */
    async function climb(o: {
      until: number;
      delay: number;
      windowMs: number;
      readyAt?: number;
    }): Promise<Array<[number, number]>> {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
      try {
        const started = new Map<string, number>();
        const delivered = new Map<string, number>();
        const keys = Array.from({ length: 256 }, (_, i) => String(i));
        let markReady = (): void => {};
        const ready = new Promise<void>((resolve) => (markReady = resolve));
        const scheduler = new ChainScheduler({
          keys,
          limit: { adaptive: { start: 2, max: 256, momentum: true }, windowMs: o.windowMs, windowDocuments: 0 },
          runner: {
            run: (key) => {
              started.set(key, 0);
              return new Promise(() => {});
            },
            park: () => {},
            delivered: (key) => delivered.get(key) ?? 0,
          },
          documents: () => [...delivered.values()].reduce((a, b) => a + b, 0),
          ...(o.readyAt !== undefined && { ready }),
          signal: new AbortController().signal,
        });
        const levels: Array<[number, number]> = [[0, scheduler.inflight().limit]];
        for (let now = 50; now <= o.until; now += 50) {
          if (now === o.readyAt) {
            markReady();
            await ready;
          }
          if (now >= (o.readyAt ?? 0))
            for (const [key, steps] of started) {
              if (steps >= o.delay) delivered.set(key, (delivered.get(key) ?? 0) + 100);
              started.set(key, steps + 1);
            }
          vi.advanceTimersByTime(50);
          const limit = scheduler.inflight().limit;
          if (limit !== levels.at(-1)![1]) levels.push([now, limit]);
        }
        return levels;
      } finally {
        vi.useRealTimers();
      }
    }

    it('measures a level once the slices it started sent their first documents, not a whole window later', async () => {
      // Each doubling: the new chains' first documents and two of a chain's pauses (a tick each: 50 ms), then a
      // growth window (0.4 of 250 ms). An unmeasured window of 250 ms after each change and a measured one as long,
      // as before, took 500 ms a step: 2 -> 4 -> 8 -> 16 at 1.5 s at the soonest.
      const levels = await climb({ until: 1200, delay: 1, windowMs: 250 });
      expect(levels.map(([, limit]) => limit).slice(0, 4)).toEqual([2, 4, 8, 16]);
    });

    it('does not measure a level before the slices it started sent anything (up to a window)', async () => {
      // Chains silent for 800 ms after they start: the first level is measured once they sent something, over a
      // window at least as long as they took (1.6 s in all), and the next one not before its new chains sent theirs.
      const levels = await climb({ until: 2400, delay: 16, windowMs: 1000 });
      expect(levels.map(([, limit]) => limit)).toEqual([2, 4]);
      expect(levels[1][0]).toBeGreaterThanOrEqual(1600);
    });

    it("counts the first level's wait from when the runner takes chains, not from its threads' start", async () => {
      // Worker threads that take 3 s to start on a loaded machine: measured from the visit's start, the first
      // documents took 3 s, and each window would last as long (the next level at 6.5 s at the soonest, after a short
      // visit had ended). From the runner's readiness they took 50 ms.
      const levels = await climb({ until: 4000, delay: 1, windowMs: 250, readyAt: 3000 });
      expect(levels.map(([, limit]) => limit).slice(0, 3)).toEqual([2, 4, 8]);
      expect(levels[1][0]).toBeGreaterThanOrEqual(3000);
    });
  });
});
