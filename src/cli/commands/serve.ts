import type { AnyCommand } from '../command.js';
import { listedCommand } from '../command-list.js';
import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import type { ServerTlsOptions } from '../../simulator/http/auth.js';
import { defaultHeapMb } from '../../simulator/admission.js';
import { startSimulator } from '../../simulator/simulator.js';
import { VespaBulkError } from '../../core/errors.js';
import { exitCodeOfSignal } from '../exit-codes.js';

interface ServeArgs {
  host: string;
  port: number;
  'config-port': number;
  config: boolean;
  clusters: string;
  'max-body-bytes': number;
  'heap-mb': number;
  'bucket-bits': number;
  'error-rate': number;
  'error-statuses': string;
  'latency-ms': number;
  'max-ops-per-second': number;
  'content-slots': number;
  'queue-limit': number;
  'close-rate': number;
  'feed-block': boolean;
  'cut-stream-after': number;
  'visit-cost-us': number;
  'visit-parallelism': number;
  'stall-rate': number;
  'garbage-rate': number;
  'truncate-rate': number;
  'converge-delay-ms': number;
  'reindex-duration-ms': number;
  seed: number;
  'request-log': boolean;
  'tls-cert'?: string;
  'tls-key'?: string;
  'tls-ca'?: string;
  'require-client-cert': boolean;
  token?: string;
}

/** Environment variable holding the token the simulator demands (keeps it out of shell history). */
export const simTokenEnv = 'VESPA_BULK_SIM_TOKEN';

function readPem(flag: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new VespaBulkError(
      'VB_USAGE',
      `${flag}: cannot read '${file}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
}

/** The TLS options of the flags, or undefined for cleartext; half a pair is a usage error. */
export function serveTlsOf(
  args: Pick<ServeArgs, 'tls-cert' | 'tls-key' | 'tls-ca' | 'require-client-cert'>,
): ServerTlsOptions | undefined {
  const cert = args['tls-cert'];
  const key = args['tls-key'];
  if (cert === undefined && key === undefined) {
    if (args['tls-ca'] !== undefined || args['require-client-cert'])
      throw new VespaBulkError('VB_USAGE', '--tls-ca and --require-client-cert need --tls-cert and --tls-key');
    return undefined;
  }
  if (cert === undefined || key === undefined)
    throw new VespaBulkError('VB_USAGE', '--tls-cert and --tls-key go together');
  if (args['require-client-cert'] && args['tls-ca'] === undefined)
    throw new VespaBulkError(
      'VB_USAGE',
      '--require-client-cert needs --tls-ca, the CA client certificates must be signed by',
    );
  return {
    cert: readPem('--tls-cert', cert),
    key: readPem('--tls-key', key),
    ...(args['tls-ca'] !== undefined ? { ca: readPem('--tls-ca', args['tls-ca']) } : {}),
    requireClientCert: args['require-client-cert'],
  };
}

const serve: CommandModule<object, ServeArgs> = {
  ...listedCommand('serve'),
  builder: (y) =>
    y
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
      .option('port', { type: 'number', default: 8080, describe: 'Document interface port (0: any free port)' })
      .option('config-port', { type: 'number', default: 19071, describe: 'Config server port (0: any free port)' })
      .option('config', { type: 'boolean', default: true, describe: 'Start the config server (--no-config to skip)' })
      .option('clusters', {
        type: 'string',
        default: 'content',
        describe: 'Comma-separated content cluster names (until a package is deployed: then its <content> ids)',
      })
      .option('max-body-bytes', {
        type: 'number',
        default: 100 * 1024 * 1024,
        describe: 'Put and update bodies above this (inflated) get 413, as the handler does',
      })
      .option('bucket-bits', {
        type: 'number',
        default: 16,
        describe:
          "Bits of a document's location that make its bucket: writes to one bucket are processed one at a time, --latency-ms each (fewer bits: more documents per bucket)",
      })
      .option('heap-mb', {
        type: 'number',
        default: defaultHeapMb,
        describe: "The container's heap in MiB: a quarter of it bounds the bytes waiting in the handler's queue",
      })
      .option('error-rate', {
        type: 'number',
        default: 0,
        describe: 'Share (0-1) of document operations answered with an error status',
      })
      .option('error-statuses', {
        type: 'string',
        default: '429,503,504,507',
        describe: 'Statuses drawn for --error-rate',
      })
      .option('latency-ms', { type: 'number', default: 0, describe: "The content nodes' time for each operation" })
      .option('max-ops-per-second', {
        type: 'number',
        default: 0,
        describe:
          'Document operations started at the content nodes per second; the rest wait in the queue (0: no bound)',
      })
      .option('content-slots', {
        type: 'number',
        default: 0,
        describe:
          'Document operations at the content nodes at once, each --latency-ms; the rest wait in the queue (0: no bound)',
      })
      .option('queue-limit', {
        type: 'number',
        default: 256,
        describe:
          "Operations waiting in the handler's queue (maxThrottled) beyond which requests get 429 (0: no queue)",
      })
      .option('close-rate', {
        type: 'number',
        default: 0,
        describe:
          'Share of operations whose answer is cut mid-response after the operation is applied (HTTP/1.1: its connection closed; HTTP/2: its stream reset)',
      })
      .option('feed-block', { type: 'boolean', default: false, describe: 'Answer 507 to every write until cleared' })
      .option('cut-stream-after', {
        type: 'number',
        default: 0,
        describe: 'Cut every streamed visit response after this many documents (0: off)',
      })
      .option('visit-cost-us', {
        type: 'number',
        default: 0,
        describe:
          "A content node's time to iterate one visited document, in microseconds (0: off); slices run in parallel up to --visit-parallelism",
      })
      .option('visit-parallelism', {
        type: 'number',
        default: 16,
        describe: 'Visit requests iterated at once with --visit-cost-us (content nodes x visitor threads)',
      })
      .option('stall-rate', {
        type: 'number',
        default: 0,
        describe: 'Share of document operations accepted and never answered (nor applied): clients meet their timeout',
      })
      .option('garbage-rate', {
        type: 'number',
        default: 0,
        describe: 'Share of document operations answered 200 with a body that is not JSON, not applied',
      })
      .option('truncate-rate', {
        type: 'number',
        default: 0,
        describe:
          'Share of document operations applied, then answered with a body shorter than its Content-Length and cut',
      })
      .option('converge-delay-ms', {
        type: 'number',
        default: 1000,
        describe: 'Time after activation until services converge',
      })
      .option('reindex-duration-ms', { type: 'number', default: 2000, describe: 'Time a reindexing takes at speed 1' })
      .option('seed', { type: 'number', default: 1, describe: 'Seed of the fault randomness' })
      .option('request-log', { type: 'boolean', default: false, describe: 'Log each request to stderr' })
      .option('tls-cert', {
        type: 'string',
        describe: 'Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate',
        group: 'Security:',
      })
      .option('tls-key', { type: 'string', describe: 'Private key (PEM) of --tls-cert', group: 'Security:' })
      .option('tls-ca', {
        type: 'string',
        describe: 'Ask clients for a certificate signed by this CA (PEM); a foreign one gets 403',
        group: 'Security:',
      })
      .option('require-client-cert', {
        type: 'boolean',
        default: false,
        describe: 'Refuse clients without a certificate signed by --tls-ca at the handshake',
        group: 'Security:',
      })
      // No yargs default: --help would print the secret.
      .option('token', {
        type: 'string',
        describe: `Require 'Authorization: Bearer <token>' (default: $${simTokenEnv}); /_sim/ paths stay open`,
        group: 'Security:',
      }),
  handler: async (args) => {
    const errorStatuses = args['error-statuses'].split(',').map((s) => Number(s.trim()));
    if (errorStatuses.some((s) => !Number.isInteger(s) || s < 100 || s > 599)) {
      throw new VespaBulkError(
        'VB_USAGE',
        `--error-statuses '${args['error-statuses']}': expected comma-separated HTTP statuses`,
      );
    }
    const tls = serveTlsOf(args);
    const envToken = process.env[simTokenEnv];
    const token = args.token ?? (envToken !== undefined && envToken !== '' ? envToken : undefined);
    if (token !== undefined && token.trim() === '') throw new VespaBulkError('VB_USAGE', '--token must not be empty');
    const sim = await listening(args, () =>
      startSimulator({
        host: args.host,
        tls,
        token,
        port: args.port,
        configPort: args.config ? args['config-port'] : false,
        clusters: args.clusters
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        maxBodyBytes: args['max-body-bytes'],
        heapMb: args['heap-mb'],
        bucketBits: args['bucket-bits'],
        requestLog: args['request-log'],
        config: { convergeDelayMs: args['converge-delay-ms'], reindexDurationMs: args['reindex-duration-ms'] },
        faults: {
          errorRate: args['error-rate'],
          errorStatuses,
          latencyMs: args['latency-ms'],
          maxOpsPerSecond: args['max-ops-per-second'],
          contentSlots: args['content-slots'],
          queueLimit: args['queue-limit'],
          closeRate: args['close-rate'],
          feedBlock: args['feed-block'],
          cutStreamAfterDocuments: args['cut-stream-after'],
          visitCostUs: args['visit-cost-us'],
          visitParallelism: args['visit-parallelism'],
          stallRate: args['stall-rate'],
          garbageRate: args['garbage-rate'],
          truncateRate: args['truncate-rate'],
          seed: args.seed,
        },
      }),
    );
    process.stderr.write(`document interface: ${sim.url}/document/v1/\n`);
    if (sim.configUrl) process.stderr.write(`config server:      ${sim.configUrl}/application/v2/\n`);
    if (tls) process.stderr.write(`tls:                HTTP/2 and HTTP/1.1 by ALPN${clientCertNote(tls)}\n`);
    if (token !== undefined) process.stderr.write('auth:               bearer token required (except /_sim/)\n');
    process.stderr.write('faults:             PUT /_sim/faults on the document port; Ctrl-C stops\n');
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await sim.close();
    // Stopped by a signal like every other command: 130 for Ctrl-C, 143 for SIGTERM (exit-codes.ts).
    process.exitCode = exitCodeOfSignal(signal);
  },
};

/**
 * Starts the servers, a port that cannot be listened on said in one line with its flag (exit 2, as a refused
 * output path is: the run never started, and another flag value fixes it) instead of Node's stack trace.
 */
async function listening<T>(args: ServeArgs, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
    if (e.code !== 'EADDRINUSE' && e.code !== 'EACCES' && e.code !== 'EADDRNOTAVAIL') throw err;
    const port = e.port ?? args.port;
    const flag = args.config && port === args['config-port'] && port !== args.port ? '--config-port' : '--port';
    const why = {
      EADDRINUSE: 'is in use (another serve, or a Vespa container, may be running)',
      EACCES: 'may not be listened on by this user',
      EADDRNOTAVAIL: `is not an address of this machine (--host ${args.host})`,
    }[e.code];
    throw new VespaBulkError(
      'VB_USAGE',
      `cannot listen on ${e.address ?? args.host}:${port}: it ${why}; choose another with ${flag} (0: any free port)${flag === '--config-port' ? ' or --no-config' : ''}`,
    );
  }
}

/** What the server asks of a client's certificate, for the startup lines: nothing without --tls-ca. */
function clientCertNote(tls: ServerTlsOptions): string {
  if (tls.requireClientCert) return '; client certificate signed by --tls-ca required';
  return tls.ca ? '; client certificates checked against --tls-ca' : '';
}

export const commands: AnyCommand[] = [serve];
