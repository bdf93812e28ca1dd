import type { Readable } from 'node:stream';

/**
 * Reads a response body chunk by chunk as it arrives (`onChunk`, synchronous), and hands on what the
 * chunks produced once per event-loop turn (`flush`). While a flush's promise is pending the body is paused,
 * so a slow consumer slows the socket down instead of piling data up.
 *
 * Compared with `for await (const chunk of body)`, which takes one chunk per turn, or `body.read()`, which
 * copies every buffered chunk into one new buffer, this neither copies nor pays a turn per chunk: a server
 * that writes a document per HTTP chunk costs little more than one that writes 64 KB at once.
 */
export function readBody(
  body: Readable,
  onChunk: (chunk: Buffer) => void,
  flush: () => void | Promise<void>,
  /** Flush at once when a turn's chunks exceed this, so one turn never holds much. */
  maxTurnBytes = 1 << 20,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let ended = false;
    let scheduled: NodeJS.Immediate | undefined;
    let pending = false;
    let turnBytes = 0;

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
      body.off('data', onData);
      body.destroy();
      reject(err);
    };

    const runFlush = (): void => {
      scheduled = undefined;
      turnBytes = 0;
      if (settled || pending) return;
      let result: void | Promise<void>;
      try {
        result = flush();
      } catch (err) {
        fail(err);
        return;
      }
      if (result !== undefined) {
        pending = true;
        body.pause();
        result.then(() => {
          pending = false;
          if (settled) return;
          if (ended) runFlush();
          else {
            body.resume();
            // Chunks that arrived while waiting are handed on too.
            if (turnBytes > 0 && scheduled === undefined) scheduled = setImmediate(runFlush);
          }
        }, fail);
        return;
      }
      if (ended && !settled) {
        settled = true;
        cleanup();
        resolve();
      }
    };

    function onData(chunk: Buffer): void {
      if (settled) return;
      try {
        onChunk(chunk);
      } catch (err) {
        fail(err);
        return;
      }
      turnBytes += chunk.length;
      if (turnBytes >= maxTurnBytes) {
        if (scheduled !== undefined) clearImmediate(scheduled);
        runFlush();
      } else if (scheduled === undefined && !pending) {
        scheduled = setImmediate(runFlush);
      }
    }
    const onEnd = (): void => {
      ended = true;
      if (scheduled !== undefined) clearImmediate(scheduled);
      if (!pending) runFlush();
    };
    const onClose = (): void => {
      if (!ended) fail(body.errored ?? new Error('the response was closed before its end'));
    };
    const cleanup = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', fail);
      body.off('close', onClose);
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', fail);
    body.on('close', onClose);
  });
}
