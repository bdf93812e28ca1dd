import { describe, expect, it } from 'vitest';
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
});
