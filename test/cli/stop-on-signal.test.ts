import { afterEach, describe, expect, it, vi } from 'vitest';
import { stopOnSignal, type SignalStop } from '../../src/cli/stop-on-signal.js';

// The signals are emitted on this process: only the listeners run, nothing is sent to it.
describe('stopOnSignal', () => {
  let stop: SignalStop | undefined;
  afterEach(() => {
    stop?.release();
    vi.restoreAllMocks();
  });

  it('aborts at the first signal, says so on stderr and keeps the first signal', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const controller = new AbortController();
    stop = stopOnSignal(controller, { message: 'vespa-bulk: stopping' });
    expect(stop.signalled).toBeUndefined();
    process.emit('SIGTERM', 'SIGTERM');
    expect(controller.signal.aborted).toBe(true);
    expect(stop.signalled).toBe('SIGTERM');
    expect(written).toEqual(['\nvespa-bulk: stopping\n']);
    // A second signal quits at once, with the first one's code (143 for SIGTERM).
    process.emit('SIGINT', 'SIGINT');
    expect(exit).toHaveBeenCalledWith(143);
    expect(stop.signalled).toBe('SIGTERM');
  });

  it('with quitOnSecond false, a second signal changes nothing; no message unless asked', () => {
    const write = vi.spyOn(process.stderr, 'write');
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    stop = stopOnSignal(new AbortController(), { quitOnSecond: false });
    process.emit('SIGINT', 'SIGINT');
    process.emit('SIGTERM', 'SIGTERM');
    expect(exit).not.toHaveBeenCalled();
    expect(write).not.toHaveBeenCalled();
    expect(stop.signalled).toBe('SIGINT');
  });

  it('release removes both listeners', () => {
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const own = stopOnSignal(new AbortController());
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual([before[0] + 1, before[1] + 1]);
    own.release();
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
  });
});
