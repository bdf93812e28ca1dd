import { describe, expect, it } from 'vitest';
import { VespaBulkError } from '../../src/core/errors.js';
import { WorkerChannel, dispatch } from '../../src/threads/channel.js';
import { fromWireError, toWireError, type WireError } from '../../src/threads/errors.js';

export type EchoProtocol = {
  start: { label: string };
  toWorker: { type: 'ping'; n: number } | { type: 'fail' } | { type: 'end' };
  fromWorker: { type: 'pong'; label: string; n: number } | { type: 'error'; error: WireError };
};

describe('WorkerChannel', () => {
  it('starts a .ts worker beside a module through the tsx bootstrap, and carries typed messages and errors both ways', async () => {
    const channel = WorkerChannel.spawn<EchoProtocol>(import.meta.url, 'echo-worker', { label: 'w0' });
    const pongs: number[] = [];
    const errors: VespaBulkError[] = [];
    channel.onMessage(
      dispatch<EchoProtocol['fromWorker']>({
        pong: (m) => pongs.push(m.label === 'w0' ? m.n : -1),
        error: (m) => errors.push(fromWireError(m.error, 'VB_VISIT')),
      }),
    );
    const exited = new Promise<number>((resolve) => channel.onExit(resolve));
    channel.post({ type: 'ping', n: 1 });
    channel.post({ type: 'ping', n: 2 });
    channel.post({ type: 'fail' });
    channel.post({ type: 'end' });
    expect(await exited).toBe(0);
    expect(channel.exited).toBe(true);
    // Posting after the exit does nothing.
    channel.post({ type: 'ping', n: 3 });
    expect(pongs).toEqual([1, 2]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(VespaBulkError);
    expect(errors[0]).toMatchObject({ code: 'VB_TIMEOUT', message: 'too slow', place: { file: 'in.jsonl', line: 3 } });
  });
});

describe('error transport', () => {
  it('keeps a VespaBulkError code, message, place and status', () => {
    const wire = toWireError(
      new VespaBulkError('VB_HTTP_STATUS', 'status 500', { status: 500, place: { documentId: 'id:a:b::c' } }),
    );
    expect(structuredClone(wire)).toEqual({
      message: 'status 500',
      code: 'VB_HTTP_STATUS',
      status: 500,
      place: { documentId: 'id:a:b::c' },
    });
    const back = fromWireError(structuredClone(wire), 'VB_VISIT');
    expect(back).toBeInstanceOf(VespaBulkError);
    expect(back).toMatchObject({
      code: 'VB_HTTP_STATUS',
      message: 'status 500',
      status: 500,
      place: { documentId: 'id:a:b::c' },
    });
  });

  it('a code that is not a VespaBulkError code, or none, becomes the fallback', () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(fromWireError(toWireError(reset), 'VB_TRANSPORT')).toMatchObject({
      code: 'VB_TRANSPORT',
      message: 'socket hang up',
    });
    expect(fromWireError(toWireError('plain'), 'VB_VISIT')).toMatchObject({ code: 'VB_VISIT', message: 'plain' });
    expect(fromWireError({ message: 'x', code: 'toString' }, 'VB_VISIT').code).toBe('VB_VISIT');
  });
});
