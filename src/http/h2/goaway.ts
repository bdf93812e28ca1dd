import { frameSizeError, protocolError } from './errors.js';
import type { Stream } from './stream.js';

/**
 * The last stream id of a GOAWAY frame, checked: on stream 0, 8 bytes at least, and not above an earlier GOAWAY's
 * (`previous`, -1 before one). Throws the connection error a bad one is.
 */
export function goawayLastStream(id: number, buf: Buffer, start: number, end: number, previous: number): number {
  if (id !== 0) throw protocolError('GOAWAY on a stream');
  if (end - start < 8) throw frameSizeError(`GOAWAY of ${end - start} bytes`);
  const last = buf.readUInt32BE(start) & 0x7fffffff;
  // A later GOAWAY may only lower the last stream id (RFC 9113 6.8): streams already failed over as
  // unprocessed would otherwise be ones the server says it processes.
  if (previous >= 0 && last > previous)
    throw protocolError(`a GOAWAY whose last stream id ${last} rises above the ${previous} of an earlier one`);
  return last;
}

/** What a GOAWAY means for one open stream. */
export const enum GoawayFate {
  /** At or below the last stream id: the server processes it. */
  Stays,
  /** Its whole answer was heard: only the rest of its body is dropped. */
  Done,
  /** Never seen by the server: it goes again elsewhere. */
  Refused,
  /** Its answer had begun, whatever the GOAWAY says: sent again it could apply twice, so it fails, maybe applied. */
  Failed,
}

export function goawayFate(s: Stream, last: number): GoawayFate {
  if (s.id <= last) return GoawayFate.Stays;
  if (s.answered) return GoawayFate.Done;
  return s.status !== 0 ? GoawayFate.Failed : GoawayFate.Refused;
}
