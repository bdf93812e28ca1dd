import { describe, expect, it } from 'vitest';
import { formatProgress, type ProgressSnapshot } from '../../src/cli/progress-format.js';
import { isTerminal, stripAnsi, useColor, visibleLength } from '../../src/cli/color.js';

/** The progress line fits every width (it must never wrap), keeps what matters longest, and says "stopped" without a stale ETA. */
const feedSnapshot: ProgressSnapshot = {
  label: 'feed',
  state: 'running',
  seconds: 754,
  done: 12_345_678,
  unit: 'ops',
  percent: 42.4,
  bytes: { read: 5_432_100_000, total: 12_811_000_000 },
  rate: 98_765.4,
  mbPerSecond: 43.21,
  ok: 12_345_000,
  failed: 678,
  retried: 12_345,
  inflight: { now: 256, limit: 512 },
  p99Ms: 123.4,
  etaSeconds: 1023,
};

const visitSnapshot: ProgressSnapshot = {
  label: 'visit',
  state: 'running',
  seconds: 65,
  done: 2_000_000,
  unit: 'docs',
  percent: 61.5,
  rate: 30_769.2,
  mbPerSecond: 31.2,
  failed: 0,
  retried: 3,
  inflight: { now: 8, limit: 8, what: 'slices' },
  etaSeconds: 40,
};

describe('formatProgress', () => {
  for (const width of [40, 80, 120, 200]) {
    it(`fits ${width} columns, with and without colour`, () => {
      for (const snapshot of [feedSnapshot, visitSnapshot]) {
        for (const color of [false, true]) {
          const line = formatProgress(snapshot, width, color);
          console.log(`width ${width}: ${stripAnsi(line)}`);
          expect(visibleLength(line)).toBeLessThanOrEqual(width - 1);
          expect(line).not.toContain('\n');
          expect(line.startsWith(snapshot.label)).toBe(true);
        }
      }
    });
  }

  it('keeps the failed count and the percent when narrow, drops in-flight and p99 first', () => {
    const narrow = formatProgress(feedSnapshot, 40);
    expect(narrow).toContain('failed 678');
    expect(narrow).toContain('42%');
    expect(narrow).not.toContain('p99');
    expect(narrow).not.toContain('256/512');
    const wide = formatProgress(feedSnapshot, 200);
    for (const part of ['12,345,678 ops', '42% of 5,432/12,811 MB', '98,765 ops/s', '43 MB/s', 'ok 12,345,000', 'failed 678', 'retried 12,345', 'in flight 256/512', 'p99 123 ms', 'eta 17m03s']) {
      expect(wide).toContain(part);
    }
  });

  it('colours a failed count only when asked and only when there are failures', () => {
    expect(formatProgress(feedSnapshot, 200, true)).toContain('\x1b[31mfailed 678\x1b[39m');
    expect(formatProgress(feedSnapshot, 200, false)).not.toContain('\x1b[');
    expect(formatProgress({ ...feedSnapshot, failed: 0 }, 200, true)).not.toContain('\x1b[');
  });

  it('no terminal: every field; stopped: no ETA', () => {
    expect(formatProgress(feedSnapshot, Number.POSITIVE_INFINITY)).toContain('p99');
    const stopped = formatProgress({ ...feedSnapshot, state: 'stopped' }, 200);
    expect(stopped).toMatch(/^feed stopped /);
    expect(stopped).not.toContain('eta');
    expect(formatProgress({ ...feedSnapshot, state: 'stopping' }, 200)).not.toContain('eta');
  });

  it('a width below the label still gives one line within it', () => {
    expect(formatProgress(feedSnapshot, 8).length).toBeLessThanOrEqual(7);
  });
});

describe('terminal and colour rules', () => {
  it('TERM=dumb is no terminal; NO_COLOR (non-empty) turns auto colour off; never and always win', () => {
    expect(isTerminal({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(isTerminal({ isTTY: true }, { TERM: 'xterm-256color' })).toBe(true);
    expect(isTerminal({ isTTY: false }, {})).toBe(false);
    expect(useColor({ isTTY: true }, { TERM: 'xterm' }, 'auto')).toBe(true);
    expect(useColor({ isTTY: true }, { TERM: 'xterm', NO_COLOR: '1' }, 'auto')).toBe(false);
    expect(useColor({ isTTY: true }, { TERM: 'xterm', NO_COLOR: '' }, 'auto')).toBe(true);
    expect(useColor({ isTTY: false }, {}, 'auto')).toBe(false);
    expect(useColor({ isTTY: false }, { NO_COLOR: '1' }, 'always')).toBe(true);
    expect(useColor({ isTTY: true }, {}, 'never')).toBe(false);
  });
});
