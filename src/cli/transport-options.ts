import type { Argv } from 'yargs';
import { proxyShown, type ProxySetting } from '../http/proxy/proxy-route.js';
import { VespaBulkError } from '../core/errors.js';
import type { Protocol, WireProtocol } from '../http/transport.js';
import type { Compression } from '../feed/options.js';

/** `--protocol` and its alias `--http2`: which HTTP a command speaks. Every command that talks to the document API takes them. */
export interface ProtocolArgs {
  protocol?: Protocol;
  http2?: boolean;
}

export function withProtocolOption<T>(y: Argv<T>): Argv<T & ProtocolArgs> {
  return y
    .option('protocol', {
      choices: ['auto', 'h2', 'http1.1'] as const,
      describe:
        'HTTP version: auto = HTTP/2 where the target speaks it (h2c on http://, ALPN on https://), else HTTP/1.1 (default auto)',
    })
    .option('http2', { type: 'boolean', describe: 'The same as --protocol h2' }) as unknown as Argv<T & ProtocolArgs>;
}

/** The library's `protocol` option, when the flags give one. */
export function protocolFromArgs(argv: ProtocolArgs): { protocol?: Protocol } {
  if (argv.http2 === true && argv.protocol !== undefined && argv.protocol !== 'h2')
    throw new VespaBulkError('VB_USAGE', `--http2 means --protocol h2, not --protocol ${argv.protocol}`);
  if (argv.http2 === true) return { protocol: 'h2' };
  return argv.protocol !== undefined ? { protocol: argv.protocol } : {};
}

/**
 * The transport flags of the commands that send many operations (feed, bench): which HTTP, and how many
 * connections and streams. Defaults are the library's (FeedOptions), so a flag left out is left out there too.
 */
export interface TransportArgs extends ProtocolArgs {
  connections?: number;
  pipelining?: number;
  'max-streams'?: number;
}

export function withTransportOptions<T>(y: Argv<T>): Argv<T & TransportArgs> {
  return withProtocolOption(y)
    .option('connections', {
      type: 'number',
      describe:
        'Connections: HTTP/2 this many, the operations spread over them and each renewed every minute, so that a load balancer reaches every container node (default 16); HTTP/1.1 at most this many, one per operation in flight, as the container serves one request at a time (default: the in-flight maximum)',
    })
    .option('max-streams', {
      type: 'number',
      describe: "HTTP/2: streams at once per connection at most, within the server's own limit (default 256)",
    })
    .option('pipelining', {
      type: 'number',
      describe: 'HTTP/1.1: requests on one connection at once (default 1: the container serves one at a time)',
    }) as unknown as Argv<T & TransportArgs>;
}

/** The library options the flags set (only those given). */
export function transportFromArgs(argv: TransportArgs): {
  protocol?: Protocol;
  connections?: number;
  pipelining?: number;
  maxStreams?: number;
} {
  return {
    ...protocolFromArgs(argv),
    ...(argv.connections !== undefined && { connections: argv.connections }),
    ...(argv.pipelining !== undefined && { pipelining: argv.pipelining }),
    ...(argv['max-streams'] !== undefined && { maxStreams: argv['max-streams'] }),
  };
}

/**
 * The endpoint as the protocol note names it: with the proxy its requests go through, if any (`proxy`: the command's
 * setting, the environment's when undefined), so that a proxy set in the shell and forgotten shows.
 */
export function endpointVia(endpoint: string, proxy: ProxySetting | undefined): string {
  let shown: string | undefined;
  try {
    shown = proxyShown(proxy, endpoint);
  } catch {
    // A malformed proxy variable: the request itself says so.
  }
  return shown === undefined ? endpoint : `${endpoint} through the proxy ${shown}`;
}

/** What `--protocol auto` chose, said once on stderr; `why`, where the choice was not the server's (a proxy's refusal). */
export function protocolNote(
  protocol: WireProtocol,
  endpoint: string,
  asked: Protocol | undefined,
  why?: string,
): string {
  return `vespa-bulk: speaking ${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'} to ${endpoint}${asked === undefined || asked === 'auto' ? ' (--protocol auto)' : ''}${why === undefined ? '' : `: ${why}`}`;
}

/**
 * An `onProtocol` that writes `protocolNote` the first time it is called: the pools a command opens to one endpoint (a
 * visit's cluster discovery, then the visit) say it once.
 */
export function tellProtocolOnce(
  endpoint: string,
  asked: Protocol | undefined,
  write: (line: string) => void,
): (protocol: WireProtocol, why?: string) => void {
  let told = false;
  return (protocol, why) => {
    if (told) return;
    told = true;
    write(protocolNote(protocol, endpoint, asked, why));
  };
}

/** `--compression`, as feed and bench both take it (the rule itself: `FeedOptions.compression`). */
export const compressionFlag = {
  choices: ['auto', 'gzip', 'none'] as const,
  default: 'auto' as Compression,
  describe: 'gzip bodies over 512 bytes: auto = unless the target is loopback',
};
