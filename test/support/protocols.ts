import { expect } from 'vitest';
import type { WireProtocol } from '../../src/http/transport.js';

/**
 * The HTTP versions the client speaks. Every test that concerns the transport runs over each, named in its
 * title: a short test over both (`describe.each(overProtocols)` with `$protocol` in the title), a long one's
 * seeds or cases split between them (`alternateProtocols`), so the suite's time stays what it was.
 */
export const protocols: readonly WireProtocol[] = ['h2', 'http1.1'];

/** `{ protocol }` rows for `describe.each` and `it.each`. */
export const overProtocols: ReadonlyArray<{ protocol: WireProtocol }> = protocols.map((protocol) => ({ protocol }));

/** Each case with a protocol, taking turns (the first case h2, the next http1.1, ...), for tests too long to run twice. */
export function alternateProtocols<T extends object>(cases: readonly T[]): Array<T & { protocol: WireProtocol }> {
  return cases.map((c, i) => ({ ...c, protocol: protocols[i % protocols.length] }));
}

/** The CLI flag that picks the protocol. */
export function protocolFlag(protocol: WireProtocol): string[] {
  return ['--protocol', protocol];
}

/** The feed spoke the protocol it was asked to (a summary from the library or the CLI's stdout). */
/** `summary`: the library's (`protocol`) or the one the CLI printed (`http.protocol`). */
export function expectSpoke(
  summary: { protocol?: string } | { 'http.protocol'?: string },
  protocol: WireProtocol,
): void {
  const spoke = 'protocol' in summary ? summary.protocol : (summary as { 'http.protocol'?: string })['http.protocol'];
  expect(spoke, 'the protocol the feed spoke').toBe(protocol);
}
