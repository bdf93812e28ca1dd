import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressLine } from '../../src/cli/progress.js';

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
