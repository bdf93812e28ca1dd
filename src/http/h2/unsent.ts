import { TransportError, toTransportError } from '../transport-error.js';

/**
 * The failure of a request none of whose bytes left the process, because the connection meant to carry it died
 * before it was ready (closed before the server's SETTINGS, refused, TLS refused). Whatever the connection died of
 * (a close reads as `closed`, maybe applied, for the requests it carried), this request was never sent: it fails as
 * `connect`, never applied, so that the caller's retry rules may send an increment or a conditional write again
 * and its failure output does not call it possibly applied. What says the endpoint is unreachable is kept.
 */
export function unsentFailure(err: unknown, tls: boolean): TransportError {
  const failure = err instanceof TransportError ? err : toTransportError(err, tls);
  if (!failure.maybeApplied) return failure;
  return new TransportError(
    'connect',
    `${failure.message}: the connection ended before it was ready, and the request was never sent`,
    { unreachable: failure.unreachable, detail: failure.detail, cause: err },
  );
}
