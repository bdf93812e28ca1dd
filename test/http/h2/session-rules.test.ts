import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../../../src/http/h2/errors.js';
import { ConnectionInflow, windowUpdateDue } from '../../../src/http/h2/flow-control.js';
import { GoawayFate, goawayFate, goawayLastStream } from '../../../src/http/h2/goaway.js';
import { SettingEffect, applySetting, isSettingsAck, peerDefaults } from '../../../src/http/h2/settings.js';
import type { Stream } from '../../../src/http/h2/stream.js';
import { overdue, sweepEvery } from '../../../src/http/h2/timeouts.js';

/**
 * The pure rules the HTTP/2 connection (session.ts) applies: the server's SETTINGS (settings.ts), when received
 * bytes are returned as WINDOW_UPDATE (flow-control.ts), what a GOAWAY means for each stream (goaway.ts), and
 * when a stream's answer is overdue (timeouts.ts). Over the wire they are in peer-session-rules.test.ts and
 * peer-streams.test.ts.
 */

function stream(fields: Partial<Stream> & { headersTimeout?: number; bodyTimeout?: number }): Stream {
  return {
    id: 1,
    status: 0,
    answered: false,
    activeAt: 0,
    ...fields,
    req: { headersTimeout: fields.headersTimeout ?? 0, bodyTimeout: fields.bodyTimeout ?? 0 },
  } as unknown as Stream;
}

function code(f: () => unknown): number | undefined {
  try {
    f();
  } catch (err) {
    return err instanceof ConnectionError ? err.h2Code : -1;
  }
  return undefined;
}

describe('settings: the server SETTINGS validated and applied', () => {
  it('tells an ACK from settings, and refuses malformed frames', () => {
    expect(isSettingsAck(1, 0, 0)).toBe(true);
    expect(isSettingsAck(0, 0, 12)).toBe(false);
    expect(code(() => isSettingsAck(1, 0, 6))).toBe(0x6); // FRAME_SIZE_ERROR
    expect(code(() => isSettingsAck(0, 0, 7))).toBe(0x6);
    expect(code(() => isSettingsAck(0, 3, 6))).toBe(0x1); // PROTOCOL_ERROR
  });

  it('applies the streams allowed, saying when they grew', () => {
    const peer = peerDefaults();
    expect(applySetting(peer, 0x3, 50)).toBe(SettingEffect.None);
    expect(peer.maxStreams).toBe(50);
    expect(applySetting(peer, 0x3, 60)).toBe(SettingEffect.Grew);
    expect(peer.maxStreams).toBe(60);
  });

  it('moves the initial window by the difference, growing or shrinking', () => {
    const peer = peerDefaults();
    expect(applySetting(peer, 0x4, 65_535 + 1000)).toBe(SettingEffect.StreamWindows | SettingEffect.Grew);
    expect(peer.windowDelta).toBe(1000);
    expect(applySetting(peer, 0x4, 100)).toBe(SettingEffect.StreamWindows);
    expect(peer.windowDelta).toBe(100 - 66_535);
    expect(peer.initialWindow).toBe(100);
    expect(code(() => applySetting(peer, 0x4, 2 ** 31))).toBe(0x3); // FLOW_CONTROL_ERROR
  });

  it('bounds the frame size, refuses push, passes the table size on, ignores unknown settings', () => {
    const peer = peerDefaults();
    expect(code(() => applySetting(peer, 0x5, 16_383))).toBe(0x1);
    expect(code(() => applySetting(peer, 0x5, 16_777_216))).toBe(0x1);
    expect(applySetting(peer, 0x5, 32_768)).toBe(SettingEffect.None);
    expect(peer.maxFrame).toBe(32_768);
    expect(applySetting(peer, 0x2, 0)).toBe(SettingEffect.None);
    expect(code(() => applySetting(peer, 0x2, 1))).toBe(0x1);
    expect(applySetting(peer, 0x1, 0)).toBe(SettingEffect.TableSize);
    expect(applySetting(peer, 0x99, 7)).toBe(SettingEffect.None);
  });
});

describe('flow-control: the receive windows', () => {
  it('owes a WINDOW_UPDATE once half the window is read', () => {
    expect(windowUpdateDue(49, 100)).toBe(false);
    expect(windowUpdateDue(50, 100)).toBe(true);
  });

  it("returns the connection's bytes in one increment at half the window, and refuses DATA past it", () => {
    const inflow = new ConnectionInflow(1000, 1000);
    inflow.receive(1000);
    expect(inflow.returned(400)).toBe(0);
    expect(inflow.returned(100)).toBe(500);
    // 500 returned: the server may send 500 more, and no byte past them.
    inflow.receive(500);
    expect(code(() => inflow.receive(1))).toBe(0x3);
  });

  it('takes the protocol window before the server hears of a smaller one', () => {
    const inflow = new ConnectionInflow(1000, 65_535);
    inflow.receive(65_535);
    expect(code(() => inflow.receive(1))).toBe(0x3);
  });
});

describe('goaway: what a GOAWAY means', () => {
  const frame = (last: number) => {
    const b = Buffer.alloc(8);
    b.writeUInt32BE(last, 0);
    return b;
  };

  it('reads the last stream id, and refuses one that rises, one on a stream or a short frame', () => {
    expect(goawayLastStream(0, frame(7), 0, 8, -1)).toBe(7);
    expect(goawayLastStream(0, frame(5), 0, 8, 7)).toBe(5);
    expect(code(() => goawayLastStream(0, frame(9), 0, 8, 7))).toBe(0x1);
    expect(code(() => goawayLastStream(1, frame(9), 0, 8, -1))).toBe(0x1);
    expect(code(() => goawayLastStream(0, frame(9), 0, 7, -1))).toBe(0x6);
  });

  it('keeps streams up to the last id, sends unseen ones again, fails those whose answer began', () => {
    expect(goawayFate(stream({ id: 5 }), 5)).toBe(GoawayFate.Stays);
    expect(goawayFate(stream({ id: 7 }), 5)).toBe(GoawayFate.Refused);
    expect(goawayFate(stream({ id: 7, status: 200 }), 5)).toBe(GoawayFate.Failed);
    expect(goawayFate(stream({ id: 7, status: 200, answered: true }), 5)).toBe(GoawayFate.Done);
  });
});

describe('timeouts: when an answer is overdue', () => {
  it('sweeps at a quarter of the timeout, between 10 ms and a second', () => {
    expect(sweepEvery(20)).toBe(10);
    expect(sweepEvery(400)).toBe(100);
    expect(sweepEvery(60_000)).toBe(1000);
  });

  it('fails headers past the headers timeout, a stalled body past the body timeout, and nothing without one', () => {
    expect(overdue(stream({ headersTimeout: 100 }), 100)).toBeUndefined();
    expect(overdue(stream({ headersTimeout: 100 }), 101)?.code).toBe('H2_HEADERS_TIMEOUT');
    expect(overdue(stream({ status: 200, headersTimeout: 100, bodyTimeout: 500 }), 200)).toBeUndefined();
    expect(overdue(stream({ status: 200, bodyTimeout: 500, activeAt: 100 }), 601)?.code).toBe('H2_BODY_TIMEOUT');
    expect(overdue(stream({}), 1e9)).toBeUndefined();
  });
});
