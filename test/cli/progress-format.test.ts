import { describe, expect, it } from 'vitest';
import { formatBytesPair, formatProgress, type ProgressSnapshot } from '../../src/cli/progress-format.js';
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
  slices: { finished: 48, total: 256 },
  inflight: { now: 8, limit: 16 },
  etaSeconds: 40,
};

describe('formatProgress', () => {
  for (const width of [40, 80, 120, 200]) {
    it(`fits ${width} columns, with and without colour`, () => {
      for (const snapshot of [feedSnapshot, visitSnapshot]) {
        for (const color of [false, true]) {
          const line = formatProgress(snapshot, width, color);
          expect(visibleLength(line), stripAnsi(line)).toBeLessThanOrEqual(width - 1);
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
    for (const part of [
      '12,345,678 ops',
      '42% of 5.4/12.8 GB',
      '98,765 ops/s',
      '43 MB/s',
      'ok 12,345,000',
      'failed 678',
      'retried 12,345',
      'in flight 256/512',
      'p99 123 ms',
      'eta 17m03s',
    ]) {
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

  it('says the outcome at any width: failed, also when none failed, at 40, 80 and 120 columns, running and ended', () => {
    for (const width of [40, 80, 120]) {
      for (const state of ['running', 'done', 'stopped'] as const) {
        expect(formatProgress({ ...feedSnapshot, failed: 0, state }, width)).toContain('failed 0');
        expect(formatProgress({ ...visitSnapshot, state }, width)).toContain('failed 0');
      }
    }
    // At 80 the less important figures go first: MB/s, in flight and p99 before the slices and the rate.
    const visit80 = formatProgress(visitSnapshot, 80);
    expect(visit80).toContain('slices 48/256');
    expect(visit80).not.toContain('MB/s');
    const feed120 = formatProgress({ ...feedSnapshot, state: 'done' }, 120);
    expect(feed120).toMatch(/^feed done 12m34s .*ok 12,345,000 {2}failed 678/);
  });

  it('words slices one way whether running, stopped or done, and shows no in-flight pair bare', () => {
    for (const state of ['running', 'stopped', 'done'] as const) {
      const line = formatProgress({ ...visitSnapshot, state, inflight: undefined }, 200);
      expect(line).toContain('slices 48/256');
      expect(line).not.toMatch(/(?<!slices )\b48\/256/);
    }
    expect(formatProgress({ ...visitSnapshot, inflight: { now: 4 } }, 200)).toContain('in flight 4  ');
  });

  it('no percentage for a run that ended with nothing done; sizes in the unit the total reads in', () => {
    const nothing = {
      ...feedSnapshot,
      state: 'stopped' as const,
      done: 0,
      ok: 0,
      failed: 0,
      percent: 100,
      bytes: { read: 645, total: 645 },
    };
    expect(formatProgress(nothing, 200)).not.toContain('%');
    expect(formatProgress({ ...nothing, state: 'running' }, 200)).toContain('100.0% of 645/645 B');
    expect(formatBytesPair(300_000, 612_000)).toBe('300/612 kB');
    expect(formatBytesPair(3_000, 61_200)).toBe('3.0/61.2 kB');
    expect(formatBytesPair(5_432_100_000, 12_811_000_000)).toBe('5.4/12.8 GB');
    expect(formatBytesPair(0, 0)).toBe('0/0 B');
  });

  it("a resumed feed's part this run and a transform's dropped operations are shown; dropped only when there are any", () => {
    const resumed: ProgressSnapshot = { ...feedSnapshot, state: 'done', done: 4_500, thisRun: 0, dropped: 30 };
    const line = formatProgress(resumed, Number.POSITIVE_INFINITY);
    expect(line).toContain('4,500 ops  this run 0  ');
    expect(line).toContain('dropped 30');
    expect(formatProgress({ ...feedSnapshot, dropped: 0 }, Number.POSITIVE_INFINITY)).not.toContain('dropped');
    // Narrow: `this run` goes before how far and the outcome.
    const narrow = formatProgress(resumed, 60);
    expect(narrow).not.toContain('this run');
    expect(narrow).toContain('failed 678');
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
