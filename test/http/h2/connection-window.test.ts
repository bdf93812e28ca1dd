import { describe, expect, it } from 'vitest';
import { connectionWindowFor, defaultStreamWindow } from '../../../src/http/h2/pool-options.js';

describe('connectionWindowFor: what a pool holds unread behind a slow reader is bounded by the pool', () => {
  it('shares 256 MiB among the connections, between one stream window and 64 MiB each', () => {
    const MiB = 1 << 20;
    expect(connectionWindowFor(1)).toBe(64 * MiB);
    expect(connectionWindowFor(4)).toBe(64 * MiB);
    expect(connectionWindowFor(8)).toBe(32 * MiB);
    expect(connectionWindowFor(16)).toBe(16 * MiB);
    expect(connectionWindowFor(64)).toBe(defaultStreamWindow);
    expect(connectionWindowFor(0)).toBe(64 * MiB);
    // Every connection count up to 16 (the default): at most 256 MiB together.
    for (let n = 1; n <= 16; n++) expect(n * connectionWindowFor(n)).toBeLessThanOrEqual(256 * MiB);
  });
});
