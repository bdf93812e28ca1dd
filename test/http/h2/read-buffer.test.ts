import { describe, expect, it } from 'vitest';
import { closeAfterEach, peerPool, send } from '../../support/h2-peer-client.js';
import { Flag, FrameType, frameBytes, type PeerConnection } from '../../support/h2-peer.js';

/**
 * Over TCP the client reads every chunk into one buffer of the connection's (net's `onread`), written over by the
 * next read: what it keeps past a read (an answer's body, the first part of a frame cut between two reads) must be
 * its own copy. Each case makes the server's bytes come in several reads (a PING answered in between proves the
 * client has read what came before it) with other bytes read in between, and checks the answers byte for byte.
 */

closeAfterEach();

/** Everything written so far has been read by the client: it answered a PING sent after it. */
async function readSoFar(c: PeerConnection, n: number): Promise<void> {
  const data = Buffer.alloc(8, n);
  c.ping(data);
  await c.take((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) !== 0 && f.payload.equals(data));
}

describe("the connection's one read buffer", () => {
  it('keeps a body that comes in DATA frames over several reads, with another answer read in between', async () => {
    const { peer, pool } = await peerPool();
    const first = send(pool, { method: 'GET', path: '/first' });
    const second = send(pool, { method: 'GET', path: '/second' });
    const c = await peer.accept();
    const a = await c.request();
    const b = await c.request();
    c.headers(a.id, [[':status', '200']]);
    c.data(a.id, 'a'.repeat(300));
    await readSoFar(c, 1);
    // Read into the same buffer as the first part of a's body.
    c.respond(b.id, 200, 'z'.repeat(500));
    await readSoFar(c, 2);
    c.data(a.id, 'b'.repeat(200), { endStream: true });
    expect((await second).body.toString()).toBe('z'.repeat(500));
    expect((await first).body.toString()).toBe('a'.repeat(300) + 'b'.repeat(200));
  });

  it('keeps the first part of a frame cut between two reads', async () => {
    const { peer, pool } = await peerPool();
    const pending = send(pool, { method: 'GET', path: '/cut-frame' });
    const c = await peer.accept();
    const r = await c.request();
    c.headers(r.id, [[':status', '200']]);
    const body = Buffer.from('0123456789'.repeat(40));
    const frame = frameBytes(FrameType.Data, Flag.EndStream, r.id, body);
    // A PING, then the frame's first part, in one write: the PING's answer says that read is done.
    const data = Buffer.alloc(8, 3);
    c.write(frameBytes(FrameType.Ping, 0, 0, data), frame.subarray(0, 150));
    await c.take((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) !== 0 && f.payload.equals(data));
    // Read into the buffer where the first part was.
    c.write(frame.subarray(150));
    expect((await pending).body.equals(body)).toBe(true);
  });
});
