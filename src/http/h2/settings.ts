import { ErrorCode, Flag, Setting, defaultMaxFrameSize, defaultWindow, maxWindow } from './frame.js';
import { ConnectionError, frameSizeError, protocolError } from './errors.js';

/** What the server's SETTINGS allow us (RFC 9113 6.5.2): one object for the connection's life. */
export interface PeerSettings {
  /** SETTINGS_MAX_CONCURRENT_STREAMS. */
  maxStreams: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE: each stream's send window to begin with. */
  initialWindow: number;
  /** SETTINGS_MAX_FRAME_SIZE. */
  maxFrame: number;
  /** How far the last SETTINGS_INITIAL_WINDOW_SIZE moved the initial window (what every open stream's window moves by). */
  windowDelta: number;
}

/** The settings before the server's first SETTINGS. */
export function peerDefaults(): PeerSettings {
  return { maxStreams: 100, initialWindow: defaultWindow, maxFrame: defaultMaxFrameSize, windowDelta: 0 };
}

/** What one setting did, as bits. */
export const enum SettingEffect {
  None = 0,
  /** The server allows more: more streams, or larger windows. */
  Grew = 1,
  /** SETTINGS_HEADER_TABLE_SIZE: the encoder's table is bounded by the value. */
  TableSize = 2,
  /** SETTINGS_INITIAL_WINDOW_SIZE: every open stream's send window moves by `windowDelta`. */
  StreamWindows = 4,
}

/**
 * Checks a SETTINGS frame's shape: true for an ACK (of ours), false for settings to apply, six bytes each.
 * Throws the connection error a malformed one is.
 */
export function isSettingsAck(flags: number, id: number, length: number): boolean {
  if (id !== 0) throw protocolError('SETTINGS on a stream');
  if ((flags & Flag.Ack) !== 0) {
    if (length !== 0) throw frameSizeError('a SETTINGS ACK with a payload');
    return true;
  }
  if (length % 6 !== 0) throw frameSizeError(`SETTINGS of ${length} bytes`);
  return false;
}

/** Validates one of the server's settings and applies it to `peer`; what it did. Throws the connection error a bad value is. */
export function applySetting(peer: PeerSettings, key: number, value: number): SettingEffect {
  switch (key) {
    case Setting.HeaderTableSize:
      return SettingEffect.TableSize;
    case Setting.EnablePush:
      // A server may only say 0 (RFC 9113, 6.5.2).
      if (value !== 0) throw protocolError(`SETTINGS_ENABLE_PUSH ${value} from a server`);
      return SettingEffect.None;
    case Setting.MaxConcurrentStreams: {
      const grew = value > peer.maxStreams;
      peer.maxStreams = value;
      return grew ? SettingEffect.Grew : SettingEffect.None;
    }
    case Setting.InitialWindowSize: {
      if (value > maxWindow)
        throw new ConnectionError(ErrorCode.FlowControlError, 'SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1');
      const delta = value - peer.initialWindow;
      peer.initialWindow = value;
      peer.windowDelta = delta;
      return delta > 0 ? SettingEffect.StreamWindows | SettingEffect.Grew : SettingEffect.StreamWindows;
    }
    case Setting.MaxFrameSize:
      if (value < defaultMaxFrameSize || value > 16_777_215)
        throw protocolError('SETTINGS_MAX_FRAME_SIZE out of range');
      peer.maxFrame = value;
      return SettingEffect.None;
    default:
      // Unknown settings are ignored (RFC 9113, 6.5.2).
      return SettingEffect.None;
  }
}
