import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressLine, rateMeter } from '../../src/cli/progress.js';

function terminal(columns: number): Writable & { isTTY: boolean; columns: number; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  }) as Writable & { isTTY: boolean; columns: number; text: () => string };
  stream.isTTY = true;
  stream.columns = columns;
  stream.text = () => chunks.join('');
  return stream;
}

describe('ProgressLine.log', () => {
  const snapshot = () => ({ label: 'feed', state: 'running' as const, seconds: 3, done: 1234, unit: 'ops' });

  it('on a terminal, clears the progress line before a log line and redraws it after', async () => {
    const stream = terminal(80);
    const line = new ProgressLine(snapshot, { stream, tty: true, ttyIntervalMs: 60_000 });
    line.draw();
    line.log('big.jsonl:7: put id:a:b::c: 400 bad');
    line.stop(false);
    await new Promise((r) => setImmediate(r));
    const text = stream.text();
    // The log line starts at column 0 of a cleared row, and stands on a row of its own.
    expect(text).toContain('\r\x1b[Kbig.jsonl:7: put id:a:b::c: 400 bad\n');
    const after = text.slice(text.indexOf('400 bad\n') + '400 bad\n'.length);
    expect(after).toMatch(/^\rfeed .*1,234/);
  });

  it('without a terminal, a log line is just a line', async () => {
    const stream = terminal(80);
    const line = new ProgressLine(snapshot, { stream, tty: false, plainIntervalMs: 60_000 });
    line.log('a failure');
    line.stop(false);
    await new Promise((r) => setImmediate(r));
    expect(stream.text()).toBe('a failure\n');
  });
});

describe('rateMeter', () => {
  it('is the rate since the last draw while running, and the mean of the whole run on the last line', () => {
    const rate = rateMeter();
    expect(rate(1000, 1)).toBe(1000);
    // A burst at the end: the last second's rate is far above the run's.
    expect(rate(4000, 2)).toBe(3000);
    expect(rate(4000, 2, true)).toBe(2000);
  });
});
