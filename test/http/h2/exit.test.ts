import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, Peer, Setting, type PeerConnection } from '../../support/h2-peer.js';

/**
 * Every process ends once its work is done, whatever the server does: a connection the client closes (after its
 * own GOAWAY, or after the server's) must not keep the process alive when the server neither reads the rest nor
 * closes its side. Run in a child process, since only a process's exit shows that no handle holds it.
 */

const fixture = join(import.meta.dirname, 'fixtures/close-then-exit.ts');

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs the fixture against `url`; resolves with its exit code (null: it was killed, still running) and stdout. */
function runClient(url: string, bodyBytes: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The bound is the test's, not the client's: a client that hangs is killed here and the test fails.
    execFile(
      process.execPath,
      ['--import', 'tsx', fixture, url, String(bodyBytes)],
      { timeout: 45_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err === null ? 0 : err.killed ? null : typeof err.code === 'number' ? err.code : 1,
          stdout,
          stderr,
        });
      },
    );
  });
}

/** A server that grants every window and stops reading at the first request; `answer` answers it (or not). */
async function silentServer(answer: (c: PeerConnection, id: number) => void): Promise<Peer> {
  const peer = await Peer.start();
  cleanups.push(() => peer.close());
  void (async () => {
    const c = await peer.accept([[Setting.InitialWindowSize, 2 ** 31 - 1]]);
    c.windowUpdate(0, 2 ** 31 - 1 - 65_535);
    const r = await c.request();
    c.stopReading();
    answer(c, r.id);
  })();
  return peer;
}

describe('the process exits after its pool closes', () => {
  it('after a GOAWAY(NO_ERROR) from a server that then neither reads nor closes', async () => {
    // 16 MiB of body: more than the socket buffers hold, so the client's last writes stay pending.
    const peer = await silentServer((c, id) => c.respond(id, 200, 'ok').goaway(id, ErrorCode.NoError));
    const run = await runClient(peer.url, 16 << 20);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('status 200\nclosed\n');
    expect(run.code).toBe(0);
  });

  it('when the client closes a connection to a server that neither reads nor closes', async () => {
    const peer = await silentServer((c, id) => c.respond(id, 200, 'ok'));
    const run = await runClient(peer.url, 16 << 20);
    expect(run.stdout).toBe('status 200\nclosed\n');
    expect(run.code).toBe(0);
  });

  it('with a small body, all sent, when the GOAWAY came before the answer, from a server that keeps the connection open', async () => {
    // The connection is draining when its last stream ends: half-closed, it waits for the server's FIN.
    const peer = await silentServer((c, id) => c.goaway(id, ErrorCode.NoError).respond(id, 200, 'ok'));
    const run = await runClient(peer.url, 10);
    expect(run.stdout).toBe('status 200\nclosed\n');
    expect(run.code).toBe(0);
  });
});
