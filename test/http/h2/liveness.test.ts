import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { Liveness, LivenessStep } from '../../../src/http/h2/liveness.js';
import { H2Session, type H2Request, type SessionOptions } from '../../../src/http/h2/session.js';
import type { TransportError } from '../../../src/http/transport-error.js';
import { closeAfterEach, later, peerPool, send } from '../../support/h2-peer-client.js';
import { until } from '../../support/until.js';
import { Flag, FrameType, Peer, type PeerConnection } from '../../support/h2-peer.js';

/**
 * Whether a connection with requests open is alive (liveness.ts): after a read-idle time it sends a PING of its
 * own, and a connection that then reads nothing within the ping timeout is dead (H2_PING_TIMEOUT), against a
 * server that stops answering on one connection without a FIN or a RST.
 */

closeAfterEach();

describe('Liveness: the rule', () => {
  it('pings after the read-idle time with requests waiting, and is dead a ping timeout later', () => {
    const l = new Liveness(100, 50, 0);
    expect(l.check(50, 0, true)).toBe(LivenessStep.None);
    expect(l.check(100, 0, true)).toBe(LivenessStep.Ping);
    expect(l.check(140, 0, true)).toBe(LivenessStep.None);
    expect(l.check(150, 0, true)).toBe(LivenessStep.Dead);
  });

  it('takes anything read as life, the answer to its PING among it', () => {
    const l = new Liveness(100, 50, 0);
    expect(l.check(100, 0, true)).toBe(LivenessStep.Ping);
    expect(l.check(120, 17, true)).toBe(LivenessStep.None);
    expect(l.check(200, 17, true)).toBe(LivenessStep.None);
    expect(l.check(220, 17, true)).toBe(LivenessStep.Ping);
  });

  it('never pings a connection with nothing waiting, however long it reads nothing', () => {
    const l = new Liveness(100, 50, 0);
    for (let t = 0; t < 10_000; t += 25) expect(l.check(t, 0, false)).toBe(LivenessStep.None);
    // Requests from now on: the quiet counts from the last check without them.
    expect(l.check(10_050, 0, true)).toBe(LivenessStep.None);
    expect(l.check(10_075, 0, true)).toBe(LivenessStep.Ping);
  });
});

interface Outcome {
  status?: number;
  err?: TransportError;
  refused?: string;
}

/** A session on its own (no pool) against `peer`, with the liveness times given. */
async function session(
  peer: Peer,
  times: Pick<SessionOptions, 'readIdleTimeoutMs' | 'pingTimeoutMs'>,
): Promise<{ s: H2Session; c: PeerConnection; refused: Map<H2Request, string> }> {
  const port = Number(new URL(peer.url).port);
  const refused = new Map<H2Request, string>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const s = new H2Session(
    net.connect({ host: '127.0.0.1', port }),
    { streamWindow: 65_535, connectionWindow: 65_535, maxStreams: 100, settingsTimeoutMs: 10_000, ...times },
    {
      ready: () => ready(),
      room: () => undefined,
      refused: (req, err) => refused.set(req, err.code),
      closed: () => undefined,
    },
  );
  later(() => s.destroy(undefined));
  const c = await peer.accept();
  await isReady;
  return { s, c, refused };
}

function request(s: H2Session, path: string): { req: H2Request; done: Promise<Outcome> } {
  let settle!: (o: Outcome) => void;
  const done = new Promise<Outcome>((resolve) => (settle = resolve));
  let status = 0;
  const req: H2Request = {
    pseudo: [':method', 'GET', ':scheme', 'http', ':authority', 'peer'],
    headers: [],
    path,
    body: null,
    headersTimeout: 0,
    bodyTimeout: 0,
    refusals: 0,
    handler: {
      onHeaders: (st) => (status = st),
      onData: () => undefined,
      onComplete: () => settle({ status }),
      onError: (err) => settle({ err }),
    },
  };
  s.request(req);
  return { req, done };
}

/** Answers each PING of the client until the connection closes. */
async function answerPings(c: PeerConnection): Promise<void> {
  for (;;) {
    const ping = await c.take((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) === 0).catch(() => undefined);
    if (ping === undefined) return;
    c.ping(Buffer.from(ping.payload), true);
  }
}

describe('a connection whose server stops answering', () => {
  it('sends a PING after the read-idle time and, unanswered, closes the connection as dead (maybe applied)', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const { s, c } = await session(peer, { readIdleTimeoutMs: 100, pingTimeoutMs: 200 });
    const { done } = request(s, '/silent');
    await c.request();
    // The server goes silent: it reads on (the PING arrives) but answers nothing, and neither closes nor resets.
    const ping = await c.take((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) === 0);
    expect(ping.payload.length).toBe(8);
    const { err } = await done;
    expect(err?.detail).toBe('H2_PING_TIMEOUT');
    expect(err?.failure).toBe('closed');
    expect(err?.maybeApplied).toBe(true);
    expect(s.isOpen).toBe(false);
  });

  it('stays open for a server that answers its PINGs, however long the answer itself takes', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const { s, c } = await session(peer, { readIdleTimeoutMs: 50, pingTimeoutMs: 100 });
    const { done } = request(s, '/slow');
    const r = await c.request();
    void answerPings(c);
    // Several PINGs (each a read-idle time apart), each answered, then the answer.
    await until(() => c.frames.filter((f) => f.type === FrameType.Ping).length >= 4);
    c.respond(r.id, 200, 'late');
    expect((await done).status).toBe(200);
    expect(s.isOpen).toBe(true);
  });

  it('does not ping a connection with no requests open', async () => {
    const peer = await Peer.start();
    later(() => peer.close());
    const { s, c } = await session(peer, { readIdleTimeoutMs: 20, pingTimeoutMs: 20 });
    const { done } = request(s, '/one');
    c.respond((await c.request()).id, 200, 'ok');
    expect((await done).status).toBe(200);
    // (A PING while the request was open is its business.) Idle for many read-idle times: no PING, still open.
    const pings = (): number => c.frames.filter((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) === 0).length;
    // A PING the client sent while the request was open may still be on its way here: the answer to a PING of the
    // peer's own comes after it, so once that is read every earlier frame is counted.
    c.ping(Buffer.from('barrier!'));
    await c.take((f) => f.type === FrameType.Ping && (f.flags & Flag.Ack) !== 0);
    const before = pings();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pings()).toBe(before);
    expect(s.isOpen).toBe(true);
  });
});

describe('over the pool: one of two connections goes silent (no FIN, no RST)', () => {
  it('fails its requests as dead within the liveness times (not their 60 s deadline) while the other connection answers, and later requests are answered', async () => {
    const { peer, pool } = await peerPool({ connections: 2, timeoutMs: 60_000 });
    // Each connection answers every request but the first connection, which goes silent after its handshake
    // (it neither reads nor writes, nor closes), while later connections answer everything.
    let silent: PeerConnection | undefined;
    const serveAll = async (): Promise<void> => {
      for (;;) {
        const c = await peer.accept();
        if (silent === undefined) {
          silent = c;
          c.stopReading();
          continue;
        }
        void answerPings(c);
        void (async () => {
          for (;;) {
            const r = await c.request().catch(() => undefined);
            if (r === undefined) return;
            c.respond(r.id, 200, 'ok');
          }
        })();
      }
    };
    void serveAll();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        send(pool, { method: 'GET', path: `/doc/${i}` }).then(
          (res) => String(res.status),
          (err: unknown) => (err as TransportError).detail ?? String(err),
        ),
      ),
    );
    // Those on the silent connection failed as dead (maybe applied: they follow the retry rules); none waited
    // for its deadline, and the rest were answered.
    expect(results.filter((r) => r !== '200' && r !== 'H2_PING_TIMEOUT')).toEqual([]);
    expect(results.filter((r) => r === 'H2_PING_TIMEOUT').length).toBeGreaterThan(0);
    const next = await send(pool, { method: 'GET', path: '/after' });
    expect(next.status).toBe(200);
  }, 40_000);
});
