import { describe, expect, it } from 'vitest';
import { resolveWorkers } from '../../src/feed/feed.js';

describe('workers and the periodic checkpoint', () => {
  it('a periodic checkpoint defaults to one worker; an explicit --workers N beside it is refused by name', () => {
    expect(resolveWorkers('-', { checkpoint: 'cp.json' })).toBe(1);
    expect(resolveWorkers('-', { checkpoint: 'cp.json', workers: 1 })).toBe(1);
    expect(() => resolveWorkers('-', { checkpoint: 'cp.json', workers: 2 })).toThrow(expect.objectContaining({ code: 'VB_USAGE', option: 'workers' }));
    // A checkpoint written only at a stop (the CLI's default file) leaves the workers alone.
    expect(resolveWorkers('-', { checkpoint: 'cp.json', checkpointIntervalMs: 0, workers: 2 })).toBe(2);
  });
});
