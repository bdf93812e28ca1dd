import { describe, expect, it } from 'vitest';
import { isServerDuration, parseDurationMs } from '../../src/time/duration.js';

describe('parseDurationMs', () => {
  it('reads every form the service reads, in milliseconds', () => {
    expect(parseDurationMs('5s')).toBe(5000);
    expect(parseDurationMs('1000ms')).toBe(1000);
    expect(parseDurationMs('2')).toBe(2000);
    expect(parseDurationMs('0.5s')).toBe(500);
    expect(parseDurationMs('.25s')).toBe(250);
    expect(parseDurationMs('1.5m')).toBe(90_000);
    expect(parseDurationMs('2h')).toBe(7_200_000);
    expect(parseDurationMs(' 3 S ')).toBe(3000);
    expect(parseDurationMs('1.0004s')).toBe(1000);
  });

  it('refuses what is not a duration', () => {
    for (const text of ['soon', '', 's', '5 days', '-1s', '1e3ms', '5sec'])
      expect(parseDurationMs(text), text).toBeUndefined();
  });
});

describe('isServerDuration', () => {
  it('accepts only the documented form: a number with unit s or ms', () => {
    for (const text of ['60s', '500ms', '0.5s', '1.25ms']) expect(isServerDuration(text), text).toBe(true);
    for (const text of ['60', '1m', '2h', '.5s', ' 5s', '5S', '5 s', ''])
      expect(isServerDuration(text), text).toBe(false);
  });
});
