import type { WaitForEndpointOptions } from '../http/wait-for-endpoint.js';
import type { Argv } from 'yargs';
import { VespaBulkError } from '../core/errors.js';
import { describeEndpoint } from '../http/reachability.js';

/** `-w/--wait S` of the commands that talk to the document API, as the official `vespa` CLI names it. */
export interface WaitArgs {
  wait: number;
}

export function withWaitOption<T>(y: Argv<T>): Argv<T & WaitArgs> {
  return y.option('wait', {
    alias: 'w',
    type: 'number',
    default: 0,
    describe:
      'Seconds to wait for the endpoint to answer before starting (GET /ApplicationStatus every 2 s); 0: start at once',
  });
}

/**
 * What a user can do about an endpoint where nothing answers (`err`, the VB_UNREACHABLE error); printed under its
 * message. A server that answered a TLS handshake in plain HTTP is up: waiting would not help, its http:// URL would.
 */
export function unreachableHint(err: unknown, endpoint?: string): string {
  if (lowerDetail(err)?.startsWith('PROXY_'))
    return 'Check the proxy (--proxy, or HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY); --no-proxy goes without one.';
  if (lowerDetail(err) !== 'ERR_SSL_WRONG_VERSION_NUMBER')
    return 'Check the endpoint (--target), or give --wait <seconds> to wait for it to come up.';
  const plain =
    endpoint !== undefined && /^https:\/\//i.test(endpoint)
      ? `http://${describeEndpoint(endpoint).slice('https://'.length)}`
      : undefined;
  return plain !== undefined ? `Run it again with --target ${plain}.` : 'Run it again with an http:// --target.';
}

/**
 * The lower layer's code under `err` (`TransportError.detail`, or an OpenSSL code): `ERR_SSL_WRONG_VERSION_NUMBER`
 * when the peer answered the TLS handshake with something else, `PROXY_*` when the proxy failed (proxy/tunnel.ts).
 */
function lowerDetail(err: unknown): string | undefined {
  for (
    let e = err, depth = 0;
    typeof e === 'object' && e !== null && depth < 6;
    depth++, e = (e as { cause?: unknown }).cause
  ) {
    const { code, detail } = e as { code?: unknown; detail?: unknown };
    if (typeof detail === 'string') return detail;
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER') return code;
  }
  return undefined;
}

/** The hint for `command`: compare takes its endpoints as arguments, not --target, and has no --wait. */
export function unreachableHintOf(command: string | undefined, err: unknown): string {
  return command === 'compare'
    ? 'Check the endpoint given as <a> or <b> (compare <a> <b>: an http(s) URL is a cluster, anything else an export).'
    : unreachableHint(err);
}

/** With `--wait S` (S > 0): waits for the endpoint, saying so on stderr; rejects with VB_UNREACHABLE when S passed. */
export async function waitIfAsked(
  args: WaitArgs,
  endpoint: string,
  connection: Pick<WaitForEndpointOptions, 'headers' | 'tls' | 'protocol' | 'proxy' | 'proxyTls'>,
  signal?: AbortSignal,
): Promise<void> {
  const seconds = args.wait;
  if (seconds === undefined || seconds === 0) return;
  if (!(Number.isFinite(seconds) && seconds > 0))
    throw new VespaBulkError('VB_USAGE', '--wait must be a number of seconds >= 0');
  process.stderr.write(`vespa-bulk: waiting up to ${seconds} s for ${describeEndpoint(endpoint)} to answer\n`);
  // Imported here: it brings the transports, which main.ts (for unreachableHint) and a command's --help need not load.
  const { waitForEndpoint } = await import('../http/wait-for-endpoint.js');
  const answer = await waitForEndpoint({
    endpoint,
    waitMs: seconds * 1000,
    ...(connection.headers !== undefined && { headers: connection.headers }),
    ...(connection.tls !== undefined && { tls: connection.tls }),
    ...(connection.proxy !== undefined && { proxy: connection.proxy }),
    ...(connection.proxyTls !== undefined && { proxyTls: connection.proxyTls }),
    ...(connection.protocol !== undefined && { protocol: connection.protocol }),
    ...(signal !== undefined && { signal }),
  });
  if (answer.waitedMs >= 1000)
    process.stderr.write(
      `vespa-bulk: ${describeEndpoint(endpoint)} answered after ${Math.round(answer.waitedMs / 1000)} s\n`,
    );
}
